"""A write that meets a busy embedded database answers 503 with Retry-After, never 500.

SQLite lets one writer at a time: a save waits for the lock (the busy timeout,
SQLITE_BUSY_TIMEOUT seconds) and fails with "database is locked" when a long
write, such as a large import, holds it longer. Nothing of the request was
written then (its transaction rolled back), so the client may simply send it
again: the judging pages keep the label and retry on 503, as they do for a
lost connection.
"""

from collections.abc import Callable

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

RETRY_AFTER_SECONDS = 5
BUSY_MESSAGES = ("database is locked", "database table is locked")
MESSAGE = "The database is busy with another write (an import, perhaps). Nothing was saved; try again in a moment."


def database_busy(exception: BaseException) -> bool:
    return isinstance(exception, OperationalError) and any(text in str(exception) for text in BUSY_MESSAGES)


class DatabaseBusyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not database_busy(exception):
            return None
        if "application/json" in request.headers.get("Accept", ""):
            response: HttpResponse = JsonResponse({"error": MESSAGE, "retry_after": RETRY_AFTER_SECONDS}, status=503)
        else:
            response = HttpResponse(MESSAGE, status=503, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
