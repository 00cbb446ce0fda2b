"""The site's icon everywhere: /favicon.ico, which browsers ask for by themselves, and the admin's pages, which do
not extend base.html."""

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

ICON_LINK = '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'


def test_favicon_ico_is_sent_for_good_to_the_svg_icon_which_answers(settings):
    # WhiteNoise serves the static files as `collectstatic` leaves them; here, where the finders find them.
    settings.WHITENOISE_USE_FINDERS = True
    client = Client()
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/favicon.svg"
    assert finders.find("favicon.svg")
    icon = client.get(response["Location"])
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content if icon.streaming else [icon.content])


def test_the_admin_pages_link_the_icon(client):
    assert ICON_LINK in client.get(reverse("admin:login")).content.decode()
    client.force_login(User.objects.create_superuser("root", password="pw-for-tests"))
    index = client.get(reverse("admin:index"))
    assert index.status_code == 200
    assert ICON_LINK in index.content.decode()
    # The admin's own title and header are kept.
    assert "<title>Site administration | " in index.content.decode()
    assert '<div id="site-name"><a href="/admin/">' in index.content.decode()
    changelist = client.get(reverse("admin:auth_user_changelist")).content.decode()
    assert ICON_LINK in changelist and "admin/js/filters.js" in changelist


def test_the_sites_pages_link_the_icon_once(client):
    page = client.get(reverse("login")).content.decode()
    assert page.count('rel="icon"') == 1
