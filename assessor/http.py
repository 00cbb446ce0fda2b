"""The request the project's views receive, typed as they see it.

Every page is behind login (`role_required`), so its user is a `User`; django-htmx's
middleware adds `htmx`.
"""

from django.contrib.auth.models import User
from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails


class AuthenticatedRequest(HttpRequest):
    user: User
    htmx: HtmxDetails
