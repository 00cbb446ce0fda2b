from django.urls import path

import assessor.campaigns.converters  # noqa: F401  (the <topic:...> converter)
from nuggets import views

app_name = "nuggets"
urlpatterns = [
    path("", views.index, name="index"),
    path("queue/", views.queue, name="queue"),
    path("work/<int:work_id>/", views.work, name="work"),
    path("work/<int:work_id>/op/<slug:operation>/", views.operation, name="op"),
    path("work/<int:work_id>/submit/", views.submit, name="submit"),
    path("work/<int:work_id>/heartbeat/", views.heartbeat, name="heartbeat"),
    path("organize/", views.organize, name="organize"),
    path("organize/topic/<topic:topic_id>/", views.organize_topic, name="organize_topic"),
    path("organize/work/<int:work_id>/reopen/", views.reopen, name="reopen"),
]
