"""The campaigns a person sees, as the header's switcher and the home page show them.

The campaign a page works in is the one its URL names (`/c/<slug>/`, the
scope's); on a page outside any (the home page, an error page) it is the only
campaign the person sees, else the one they worked in last, as for the organizer
pages asked for without a campaign (`assessor.campaigns.middleware.campaign_page`).

The campaigns are read once a request, with their progress where the home page
asks: each count is a subquery grouped by campaign, so the list costs one query
whatever the number of campaigns.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest

from assessor.campaigns.access import campaigns_visible
from assessor.campaigns.middleware import CAMPAIGNS_SEEN, SESSION_KEY, campaign_path
from assessor.jobs.engine import OPEN_STATUSES
from assessor.models import AssessorWork, Campaign, Job, Run, Topic
from assessor.models.scope import scoped_campaign

# Where a request keeps the campaigns it read, and whether with their progress (the middleware, the header and the
# home page share them).
SEEN = CAMPAIGNS_SEEN


def _per_campaign(rows: QuerySet, path: str = "campaign", **filters: object) -> Coalesce:
    """The number of `rows` of the campaign of the outer row (a subquery grouped by campaign)."""
    grouped = (
        rows.filter(**{path: OuterRef("pk")}, **filters).order_by().values(path).annotate(n=Count("*")).values("n")
    )
    return Coalesce(Subquery(grouped, output_field=IntegerField()), 0)


def campaigns_with_progress(queryset: QuerySet[Campaign]) -> QuerySet[Campaign]:
    """The campaigns, each with its topics, runs, work (submitted and in all) and open jobs (not its answers: tens of
    thousands a campaign at TREC scale, counted for the one campaign a page shows)."""
    works = AssessorWork.objects.unscoped()
    return queryset.annotate(
        topic_count=_per_campaign(Topic.objects.unscoped()),
        run_count=_per_campaign(Run.objects.unscoped()),
        work_total=_per_campaign(works, "topic__campaign"),
        work_submitted=_per_campaign(works, "topic__campaign", status=AssessorWork.Status.SUBMITTED),
        open_jobs=_per_campaign(Job.objects.unscoped(), status__in=OPEN_STATUSES),
    )


def campaigns_seen(request: HttpRequest, *, progress: bool = False) -> list[Campaign]:
    """The campaigns the person sees, oldest first, read once a request (with their progress if asked for)."""
    read: tuple[bool, list[Campaign]] | None = getattr(request, SEEN, None)
    if read is None or (progress and not read[0]):
        queryset = campaigns_visible(request.user)
        read = (progress, list(campaigns_with_progress(queryset) if progress else queryset))
        setattr(request, SEEN, read)
    return read[1]


def campaign_current(request: HttpRequest) -> Campaign | None:
    """The campaign the page works in: its URL's; outside one, the only one the person sees, else the one they
    worked in last (None: they see none)."""
    scoped = scoped_campaign() or getattr(request, "campaign", None)
    if scoped is not None:
        return scoped
    seen = campaigns_seen(request)
    last = request.session.get(SESSION_KEY) if hasattr(request, "session") else None
    return next((campaign for campaign in seen if campaign.slug == last), seen[0] if seen else None)


def campaign_switch_url(request: HttpRequest, campaign: Campaign, current: Campaign | None) -> str:
    """The page the switcher offers in `campaign`: the same page where it names no row (a list, a form) or where
    `campaign` is the page's own, else the campaign's home (a topic or a job of one campaign is not another's)."""
    match = getattr(request, "resolver_match", None)
    same_page = match is not None and (not (match.args or match.kwargs) or campaign == current)
    return campaign_path(campaign, request.path_info if same_page else "/")


@dataclass(frozen=True)
class CampaignChoice:
    campaign: Campaign
    url: str
    current: bool


def campaign_choices(request: HttpRequest, current: Campaign | None) -> list[CampaignChoice]:
    return [
        CampaignChoice(campaign, campaign_switch_url(request, campaign, current), campaign == current)
        for campaign in campaigns_seen(request)
    ]
