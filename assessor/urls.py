from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from assessor import views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("collection/", include("assessor.collection_urls")),
    path("nuggets/", include("nuggets.urls")),
    path("assignment/", include("assignment.urls")),
    path("judge/", include("assignment.judge_urls")),
    path("support/", include("support.urls")),
    path("metaeval/", include("metaeval.urls")),
    path("jobs/", include("assessor.jobs_urls")),
]
