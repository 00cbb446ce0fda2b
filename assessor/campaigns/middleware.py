"""Pages inside a campaign: `/c/<slug>/...` is the page `...` in the campaign `slug`.

The middleware reads the campaign (and whether the person sees it) in one
query, serves the rest of the path inside the campaign's scope, and sets the
script prefix to `/c/<slug>/` for the request, so that every URL the page
builds (`reverse`, `{% url %}`, redirects) stays in the campaign. A campaign
that does not exist or that the person does not see is "not found".

A page asked for without the prefix works inside the only campaign while
there is one; once there are several, an organizer's page sends the person to
the same page in their current campaign (`process_view`: `campaign_page` is
set on the view by the roles' decorator, assessor.work.roles.role_required).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import get_script_prefix, set_script_prefix

from assessor.campaigns.access import campaign_visible, campaigns_with_membership
from assessor.models import Campaign
from assessor.models.scope import campaign_scope, scope_enter, scope_leave, scoped_campaign

CAMPAIGN_PATH = re.compile(r"^/c/(?P<slug>[-a-zA-Z0-9_]+)(?P<rest>/.*)$")
# The campaign a person worked in last, for the pages asked for without one.
SESSION_KEY = "campaign"
# Where a request keeps the campaigns the person sees, once read: (with their progress?, the campaigns).
CAMPAIGNS_SEEN = "_campaigns_seen"


def campaign_prefix(campaign: Campaign) -> str:
    return f"c/{campaign.slug}/"


def campaign_path(campaign: Campaign, path: str) -> str:
    """`path` (a URL of this site, from its root) inside `campaign`."""
    return "/" + campaign_prefix(campaign) + path.lstrip("/")


@contextmanager
def campaign_urls(campaign: Campaign) -> Iterator[None]:
    """URLs built in the block are `campaign`'s pages (the script prefix names it), its rows the ones read."""
    before = get_script_prefix()
    set_script_prefix(before + campaign_prefix(campaign))
    try:
        with campaign_scope(campaign):
            yield
    finally:
        set_script_prefix(before)


class CampaignMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        match = CAMPAIGN_PATH.match(request.path_info)
        if match is None:
            try:
                return self.get_response(request)
            finally:
                _page_scope_leave(request)
        user = request.user
        visible = _campaigns_seen(request)
        campaign = next((campaign for campaign in visible if campaign.slug == match["slug"]), None)
        if campaign is None and not user.is_authenticated:
            campaign = Campaign.objects.filter(slug=match["slug"]).first()  # its page sends them to log in
        if campaign is None:
            raise Http404("No such campaign.")
        request.campaign = campaign  # type: ignore[attr-defined]
        request.path_info = match["rest"]
        if user.is_authenticated and request.session.get(SESSION_KEY) != campaign.slug:
            request.session[SESSION_KEY] = campaign.slug
        with campaign_urls(campaign):
            return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Callable, args: tuple, kwargs: dict) -> HttpResponse | None:
        """An organizer's page (`campaign_page`, set by assessor.work.roles.role_required) asked for without a
        campaign: served inside the only campaign the person sees, or, once there are several, sent to the same page
        in their current one."""
        if not getattr(view, "campaign_page", False) or scoped_campaign() is not None:
            return None
        if not request.user.is_authenticated:
            return None  # the page's login_required sends them to log in
        everyone = list(campaigns_with_membership(request.user))
        visible = _campaigns_seen(request, everyone)
        if len(everyone) == 1 and visible:
            request.campaign = visible[0]  # type: ignore[attr-defined]
            request._campaign_scope = scope_enter(visible[0])  # type: ignore[attr-defined]
            return None
        if not visible:
            raise Http404("You are not a member of any campaign.")
        if request.method not in ("GET", "HEAD"):
            raise Http404("Name the campaign: this page is a campaign's.")
        last = request.session.get(SESSION_KEY)
        current = next((campaign for campaign in visible if campaign.slug == last), visible[0])
        return HttpResponseRedirect(campaign_path(current, request.get_full_path()))


def _campaigns_seen(request: HttpRequest, everyone: list[Campaign] | None = None) -> list[Campaign]:
    """The campaigns the person sees, oldest first, read in one query (every campaign, with their membership) and
    kept on the request for the header's switcher (`CAMPAIGNS_SEEN`)."""
    if everyone is None:
        everyone = list(campaigns_with_membership(request.user)) if request.user.is_authenticated else []
    visible = [campaign for campaign in everyone if campaign_visible(request.user, campaign)]
    setattr(request, CAMPAIGNS_SEEN, (False, visible))
    return visible


def _page_scope_leave(request: HttpRequest) -> None:
    token = getattr(request, "_campaign_scope", None)
    if token is not None:
        scope_leave(token)
