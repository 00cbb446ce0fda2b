from django.urls import path

from assessor.jobs import views as jobs_views

app_name = "jobs"
urlpatterns = [
    path("", jobs_views.job_list, name="list"),
    path("launch/<slug:kind>/", jobs_views.job_launch_page, name="launch"),
    path("endpoints/", jobs_views.endpoints_page, name="endpoints"),
    path("endpoints/<slug:name>/delete/", jobs_views.endpoint_delete_view, name="endpoint_delete"),
    path("<int:job_id>/", jobs_views.job_detail, name="detail"),
    path("<int:job_id>/calls/", jobs_views.job_call_log, name="calls"),
    path("<int:job_id>/cancel/", jobs_views.job_cancel_view, name="cancel"),
    path("<int:job_id>/resume/", jobs_views.job_resume_view, name="resume"),
]
