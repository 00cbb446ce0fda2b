from django.urls import path

from assignment import judge_views as views

app_name = "judge"
urlpatterns = [
    path("assign/<int:work_id>/", views.start, name="assign"),
    path("assign/<int:work_id>/answer/<int:number>/", views.answer, name="answer"),
    path("assign/<int:work_id>/answer/<int:number>/label/", views.label, name="label"),
    path("assign/<int:work_id>/submit/", views.submit, name="submit"),
    path("organize/", views.organize, name="organize"),
    path("organize/work/<int:work_id>/", views.organize_work, name="organize_work"),
    path("organize/work/<int:work_id>/reopen/", views.reopen, name="reopen"),
]
