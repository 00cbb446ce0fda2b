from django.urls import path

app_name = "support"
urlpatterns: list = []
