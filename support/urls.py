from django.urls import path

from support import judge_views as views

app_name = "support"
urlpatterns = [
    path("judge/<int:work_id>/", views.start, name="judge"),
    path("judge/<int:work_id>/answer/<int:number>/", views.answer, name="answer"),
    path("judge/<int:work_id>/answer/<int:number>/label/", views.label, name="label"),
    path("judge/<int:work_id>/submit/", views.submit, name="submit"),
    path("organize/", views.organize, name="organize"),
    path("organize/work/<int:work_id>/", views.organize_work, name="organize_work"),
    path("organize/work/<int:work_id>/reopen/", views.reopen, name="reopen"),
]
