"""The health endpoint a load balancer, a proxy or a process manager asks: is the database
there, and the job queue's broker?

Reachable without login and cheap (one `SELECT 1`, one broker connection), so that
it can be asked every few seconds. It answers 200 when both are up and 503 naming
what is down; the reason behind a failure goes to the log, not to the anonymous caller.
"""

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from kombu import Connection

logger = logging.getLogger(__name__)

# A probe that waits longer than its caller's own timeout answers nobody.
BROKER_TIMEOUT_SECONDS = 2.0


def database_check() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def broker_check() -> None:
    broker = Connection(
        settings.CELERY_BROKER_URL,
        transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        connect_timeout=BROKER_TIMEOUT_SECONDS,
    )
    try:
        # One try: a broker that refuses now is down now.
        broker.ensure_connection(max_retries=1, interval_start=0, timeout=BROKER_TIMEOUT_SECONDS)
    finally:
        broker.release()


CHECKS: dict[str, Callable[[], None]] = {"database": database_check, "broker": broker_check}


def services_down() -> list[str]:
    """The names of the services that failed their check, in the order of CHECKS."""
    down = []
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:  # any failure of a service means it is down for us
            logger.warning("health: the %s is down: %s: %s", name, type(exc).__name__, exc)
            down.append(name)
    return down


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    down = services_down()
    checks = {name: ("down" if name in down else "ok") for name in CHECKS}
    if down:
        return JsonResponse({"status": f"down: {', '.join(down)}", "checks": checks}, status=503)
    return JsonResponse({"status": "ok", "checks": checks})
