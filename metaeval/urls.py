from django.urls import path

app_name = "metaeval"
urlpatterns: list = []
