"""A request holding a NUL character (%00) is answered 400 before any page reads it.

PostgreSQL refuses NUL in a text parameter, so a page that looks up what the
request names (`?source=`, `?method=`, a topic in the address) would fail with a
server error there, and SQLite would look the NUL up as if it were a name. No
name, id or text of the app holds one (the importers refuse it too), so the
refusal is made once, here, for the address, the query string and the posted
form, rather than by every page that reads them.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, QueryDict

NUL = "\x00"
REFUSAL = "The request holds a NUL character (%00) in its address or parameters: no page takes one."


def _holds_nul(parameters: QueryDict) -> bool:
    return any(NUL in key or any(NUL in value for value in values) for key, values in parameters.lists())


def request_holds_nul(request: HttpRequest) -> bool:
    # Only a POST has a form to read (request.POST parses the body: CSRF's check reads it next anyway).
    posted = request.method == "POST" and _holds_nul(request.POST)
    return NUL in request.path_info or _holds_nul(request.GET) or posted


class NulRefusalMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request_holds_nul(request):
            return HttpResponseBadRequest(REFUSAL, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
