from django.urls import path

app_name = "nuggets"
urlpatterns: list = []
