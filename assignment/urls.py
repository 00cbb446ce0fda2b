from django.urls import path

from assignment import views

app_name = "assignment"
urlpatterns = [
    path("leaderboard/", views.leaderboard, name="leaderboard"),
    path("rerun/<slug:assigner>/", views.rerun_stale, name="rerun_stale"),
]
