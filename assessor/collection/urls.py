from django.urls import path

import assessor.campaigns.converters  # noqa: F401  (the <topic:...> converter)
from assessor.collection import views
from assessor.registry import registry

app_name = "collection"
urlpatterns = [
    path("topics/", views.topic_list, name="topics"),
    path("topics/<topic:topic_id>/", views.topic_detail, name="topic"),
    path("runs/", views.run_list, name="runs"),
    path("answers/<int:answer_id>/", views.answer_detail, name="answer"),
    # Not under runs/: a run id may hold slashes, so nothing may follow it there.
    path("run-join/<path:run_id>", views.run_join, name="run_join"),
    # Last in its pattern, so that a run id may hold any character.
    path("runs/<path:run_id>", views.run_detail, name="run"),
    path("leaderboards/", views.leaderboards, name="leaderboards"),
    path("upload/", views.upload, name="upload"),
    path("uploads/<int:upload_id>/", views.upload_detail, name="upload_detail"),
    path("uploads/<int:upload_id>/retry/", views.upload_retry, name="upload_retry"),
    path("uploads/<slug:kind>/<slug:name>/delete/", views.upload_delete, name="upload_delete"),
    path("download/qrels/<slug:source>/", views.download_qrels, name="download_qrels"),
    # The apps' boards and downloads (support leaderboard, nuggets, labels, scores).
    *(path(route.route, route.view, name=route.name) for route in registry.collection_routes),
]
