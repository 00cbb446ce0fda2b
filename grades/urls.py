from django.urls import path

from grades import judge_views, views

app_name = "grades"
urlpatterns = [
    path("work/<int:work_id>/", judge_views.start, name="judge"),
    path("work/<int:work_id>/report/<int:number>/", judge_views.report, name="report"),
    path("work/<int:work_id>/report/<int:number>/label/", judge_views.label, name="label"),
    path("work/<int:work_id>/submit/", judge_views.submit, name="submit"),
    path("organize/", judge_views.organize, name="organize"),
    path("organize/work/<int:work_id>/", judge_views.organize_work, name="organize_work"),
    path("organize/work/<int:work_id>/reopen/", judge_views.reopen, name="reopen"),
    path("rerun/<slug:name>/", views.rerun_stale, name="rerun_stale"),
]
