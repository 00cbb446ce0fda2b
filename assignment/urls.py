from django.urls import path

app_name = "assignment"
urlpatterns: list = []
