from django.urls import path

from argue import views

app_name = "argue"
urlpatterns = [
    path("work/<int:work_id>/", views.start, name="judge"),
    path("work/<int:work_id>/sentence/<int:number>/", views.sentence, name="sentence"),
    path("work/<int:work_id>/sentence/<int:number>/label/", views.label, name="label"),
    path("work/<int:work_id>/submit/", views.submit, name="submit"),
    path("organize/", views.organize, name="organize"),
    path("organize/work/<int:work_id>/", views.organize_work, name="organize_work"),
    path("organize/work/<int:work_id>/reopen/", views.reopen, name="reopen"),
]
