from django.urls import path

from preferences import views

app_name = "preferences"
urlpatterns = [
    path("work/<int:work_id>/", views.start, name="judge"),
    path("work/<int:work_id>/pair/<int:number>/", views.pair, name="pair"),
    path("work/<int:work_id>/pair/<int:number>/label/", views.label, name="label"),
    path("work/<int:work_id>/submit/", views.submit, name="submit"),
    path("organize/", views.organize, name="organize"),
    path("organize/work/<int:work_id>/", views.organize_work, name="organize_work"),
    path("organize/work/<int:work_id>/reopen/", views.reopen, name="reopen"),
]
