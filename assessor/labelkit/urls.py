"""The kit's organizer pages, under /labels/<app's name>/ (assessor/site/urls.py includes them)."""

from django.urls import path

from assessor.labelkit import views

app_name = "labels"
urlpatterns = [
    path("<slug:family>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("<slug:family>/<slug:name>/labels/", views.download_labels, name="download"),
    path("<slug:family>/<slug:name>/scores/", views.download_scores, name="score_file"),
]
