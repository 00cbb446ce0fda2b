from django.urls import path

from assignment import views

app_name = "assignment"
urlpatterns = [
    path("leaderboard/", views.leaderboard, name="leaderboard"),
]
