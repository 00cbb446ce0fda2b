"""The request the project's views receive, typed as they see it.

Every page is behind login (`role_required`), so its user is a `User`; django-htmx's
middleware adds `htmx`.
"""

from django.contrib.auth.models import User
from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.middleware import HtmxDetails


class AuthenticatedRequest(HttpRequest):
    user: User
    htmx: HtmxDetails


def back_url(request: HttpRequest, url: str | None, *, fallback: str) -> str:
    """Where to send the user back to: `url` (a form's "next", the Referer) when it is a page of this site, else `fallback`.

    A link from elsewhere must never make the site redirect off it (an open redirect).
    """
    if url and url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return url
    return fallback
