"""The project's own deployment checks (`manage.py check --deploy`), beside Django's security.* ones.

Django checks that ALLOWED_HOSTS is not empty, but not that it names a host:
`*` passes its checks and answers any Host header, so that the addresses a
page builds from the request's host (its redirects, the site's own links)
can be made to point anywhere by whoever sends the request.
"""

from collections.abc import Iterable
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage
from django.core.checks import Warning as CheckWarning

ANY_HOST = "*"


def allowed_hosts_check(app_configs: Iterable[AppConfig] | None = None, **kwargs: Any) -> list[CheckMessage]:
    """A warning when ALLOWED_HOSTS lets any host in (a leading-dot entry names one domain: it is not flagged)."""
    if ANY_HOST not in settings.ALLOWED_HOSTS:
        return []
    return [
        CheckWarning(
            "ALLOWED_HOSTS holds '*': the site answers a request for any host name, "
            "and the addresses it builds from the request's Host header can point anywhere.",
            hint="Set ALLOWED_HOSTS to the host names the site is served under (assessor.example.org).",
            id="assessor.W001",
        )
    ]
