from django.urls import path

from assessor.accounts import views

app_name = "accounts"
urlpatterns = [
    path("", views.accounts, name="list"),
    path("<int:user_id>/password/", views.password, name="password"),
    path("<int:user_id>/active/", views.active, name="active"),
]
