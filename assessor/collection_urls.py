from django.urls import path

from assessor import views

app_name = "collection"
urlpatterns = [
    path("topics/", views.topic_list, name="topics"),
    path("topics/<str:topic_id>/", views.topic_detail, name="topic"),
    path("runs/", views.run_list, name="runs"),
    # Last in its pattern, so that a run id may hold any character.
    path("runs/<path:run_id>", views.run_detail, name="run"),
    path("leaderboards/", views.leaderboards, name="leaderboards"),
    path("leaderboards/support/", views.support_leaderboard, name="support_leaderboard"),
    path("upload/", views.upload, name="upload"),
    path("download/qrels/<slug:source>/", views.download_qrels, name="download_qrels"),
    path("download/nuggets/<slug:name>/", views.download_nuggets, name="download_nuggets"),
    path(
        "download/assignments/<slug:nuggets>/<slug:assigner>/", views.download_assignments, name="download_assignments"
    ),
    path("download/scores/<slug:nuggets>/<slug:assigner>/", views.download_scores, name="download_scores"),
    path("download/support/<slug:method>/", views.download_support, name="download_support"),
    path("download/support-scores/<slug:method>/", views.download_support_scores, name="download_support_scores"),
]
