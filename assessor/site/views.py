"""The home page: an organizer's campaigns with their progress, and a campaign's destinations; or the assessor's
queue of work, by campaign.

`/` lists the campaigns the organizer sees (the site's administrators: all), each linking to its own home,
`/c/<slug>/`: that campaign's size and the destinations of the families it uses. Where the organizer sees one
campaign only, `/` shows its destinations too.
"""

from typing import cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import Resolver404

from assessor.campaigns.middleware import campaign_path
from assessor.models import Answer
from assessor.models.scope import scoped_campaign
from assessor.site.campaigns import campaigns_seen
from assessor.site.nav import organizer_links
from assessor.work.queue import queue_groups, queue_items
from assessor.work.roles import Role, user_role


@login_required
def home(request: HttpRequest) -> HttpResponse:
    role = user_role(request.user)
    if role in (Role.ORGANIZER, Role.ADMIN):
        return organizer_home(request)
    if role == Role.ASSESSOR:
        queue = queue_items(user=cast(User, request.user))
        return render(request, "home_assessor.html", {"queue": queue, "groups": queue_groups(queue)})
    return render(request, "home.html")


def organizer_home(request: HttpRequest) -> HttpResponse:
    campaigns = campaigns_seen(request, progress=True)
    scoped = scoped_campaign()
    if scoped is not None:
        shown = next((campaign for campaign in campaigns if campaign.pk == scoped.pk), None)
    else:
        shown = campaigns[0] if len(campaigns) == 1 else None
    context = {
        "campaign_home": scoped is not None,
        "campaigns": [(campaign, campaign_path(campaign, "/")) for campaign in campaigns],
        "campaign": shown,  # the campaign whose destinations the page shows, with its progress
        "links": organizer_links(shown) if shown is not None else [],
        "answers": Answer.objects.filter(run__campaign=shown).count() if shown is not None else 0,
    }
    return render(request, "home_organizer.html", context)


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
