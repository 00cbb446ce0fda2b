from django.urls import path

from tests.verdicts import views

app_name = "verdicts"
urlpatterns = [
    path("work/<int:work_id>/", views.judge, name="judge"),
    path("work/<int:work_id>/label/<int:number>/", views.label, name="label"),
    path("work/<int:work_id>/submit/", views.submit, name="submit"),
    path("organize/", views.organize, name="organize"),
]
