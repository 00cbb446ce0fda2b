"""The organizer's "include open work" switch: `?open=1` on any page counts provisional labels too.

One switch for every page that shows scores (leaderboards, the run page, the
meta-evaluation, downloads): the request runs inside
`assessor.scoring.lifecycle.open_work_included`, so the pages need no parameter
of their own. Only organizers may turn it on; `request.include_open` tells the
templates to say the figures are provisional.
"""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from assessor.scoring.lifecycle import open_work_included
from assessor.work.roles import Role, user_role

OPEN_PARAMETER = "open"


def wants_open_work(request: HttpRequest) -> bool:
    if request.GET.get(OPEN_PARAMETER) != "1" or not request.user.is_authenticated:
        return False
    return user_role(request.user) in (Role.ORGANIZER, Role.ADMIN)


class IncludeOpenWorkMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        include = wants_open_work(request)
        request.include_open = include  # type: ignore[attr-defined]
        with open_work_included(include):
            return self.get_response(request)


def open_work_switch(request: HttpRequest) -> dict[str, object]:
    """Template context: whether open work is counted, and the page's address with the switch flipped."""
    include = getattr(request, "include_open", False)
    query = request.GET.copy()
    if include:
        query.pop(OPEN_PARAMETER, None)
    else:
        query[OPEN_PARAMETER] = "1"
    encoded = query.urlencode()
    return {"include_open": include, "open_switch_url": f"{request.path}?{encoded}" if encoded else request.path}
