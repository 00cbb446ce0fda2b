"""The home page: the organizer's destinations, or the assessor's queue of work."""

from typing import cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import Resolver404

from assessor.collection import selectors
from assessor.site.nav import organizer_links
from assessor.work.queue import queue_items
from assessor.work.roles import Role, user_role


@login_required
def home(request: HttpRequest) -> HttpResponse:
    role = user_role(request.user)
    if role in (Role.ORGANIZER, Role.ADMIN):
        context = {"links": organizer_links(), "counts": selectors.collection_counts()}
        return render(request, "home_organizer.html", context)
    if role == Role.ASSESSOR:
        return render(request, "home_assessor.html", {"queue": queue_items(user=cast(User, request.user))})
    return render(request, "home.html")


def _reason(exception: Exception | None) -> str:
    """The message a view gave its 403 or 404, if it gave one for people to read.

    A URL that matches no route carries the resolver's data instead of a sentence;
    that one gets the page's general text only.
    """
    if exception is None or isinstance(exception, Resolver404) or not exception.args:
        return ""
    first = exception.args[0]
    return first if isinstance(first, str) else ""


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "403.html", {"reason": _reason(exception)}, status=403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "404.html", {"reason": _reason(exception), "path": request.path}, status=404)
