"""The site's URLs: the shell's own pages, then each app's, as the apps registered them."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from assessor.registry import registry
from assessor.site import health, views
from assessor.work import pages as work_pages

urlpatterns = [
    path("", views.home, name="home"),
    path("health/", health.health, name="health"),
    # Browsers, and pages without the site's frame, ask for /favicon.ico: the site's icon is an SVG.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("collection/", include("assessor.collection.urls")),
    path("jobs/", include("assessor.jobs.urls")),
    path("accounts/", include("assessor.accounts.urls")),
    path("labels/", include("assessor.labelkit.urls")),  # the answer-label kit's boards and files, for its apps
    path("work/<int:work_id>/notes/", work_pages.work_notes, name="work_notes"),
    *(path(item.prefix, include(item.module)) for item in registry.url_includes),
]

# The error pages in the site's frame, with the reason the view gave; 500 is
# Django's own handler with templates/500.html, which needs no request.
handler403 = views.permission_denied
handler404 = views.page_not_found
