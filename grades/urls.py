from django.urls import path

from grades import views
from grades.judge_views import GRADING

app_name = "grades"
urlpatterns = [
    *GRADING.urls(),
    path("rerun/<slug:name>/", views.rerun_stale, name="rerun_stale"),
]
