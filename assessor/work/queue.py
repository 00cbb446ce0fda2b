"""An assessor's queue of work: its order, what is left of each piece, and what comes next.

The queue holds the work of every campaign the assessor has work in and belongs to, whatever
campaign the page is in, grouped by campaign (oldest campaign first). The order
is the one rule both the queue page and a finished page's "next" link use: by
campaign, then open work before submitted work, then by topic, then by stage (a
topic's nugget list before the ManualAssign that labels against it, then support
judging). Where the queue spans several campaigns, each work's page is the one
inside its campaign (`/c/<slug>/...`), whose header names it.
"""

from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby

from django.contrib.auth.models import User
from django.urls import NoReverseMatch, get_script_prefix, reverse, set_script_prefix

from assessor.models import AssessorWork, Campaign
from assessor.models.scope import scoped_campaign
from assessor.registry import registry
from assessor.work.access import in_member_campaigns
from assessor.work.timing import duration_label


@dataclass
class QueueItem:
    work: AssessorWork
    url: str | None  # None: the kind's page is not installed
    done: int | None  # None: the kind does not count its progress
    total: int | None
    unit: str
    time_label: str
    waiting: str = ""  # why the work cannot be done yet (its kind's WorkPage.waiting); empty: it can

    @property
    def progress_label(self) -> str:
        """`5 / 277 pairs`, or empty when the kind does not count."""
        if self.done is None or self.total is None:
            return ""
        return f"{self.done} / {self.total} {self.unit}".strip()


def stage_of(kind: str) -> int:
    page = registry.work_page(kind)
    return page.stage if page else 99


@dataclass
class QueueGroup:
    """The queue's work of one campaign."""

    campaign: Campaign
    items: list[QueueItem]


def queue_key(work: AssessorWork) -> tuple[bool, str, int, str]:
    return (work.status == AssessorWork.Status.SUBMITTED, work.topic_id, stage_of(work.kind), work.kind)


def _campaign_key(work: AssessorWork) -> tuple:
    campaign = work.topic.campaign
    return (campaign.created_at, campaign.pk)


def _campaign_prefix(campaign: Campaign) -> str:
    # The prefix assessor.campaigns.middleware serves a campaign's pages under (its `campaign_prefix`, a layer up).
    return f"c/{campaign.slug}/"


@contextmanager
def site_root_urls(campaign: Campaign | None = None) -> Iterator[None]:
    """URLs built in the block start from the site's root, not inside the campaign the request is in; or inside
    `campaign`, when it is given."""
    before = get_script_prefix()
    scoped = scoped_campaign()
    root = before.removesuffix(_campaign_prefix(scoped)) if scoped else before
    set_script_prefix(root + _campaign_prefix(campaign) if campaign else root)
    try:
        yield
    finally:
        set_script_prefix(before)


def work_url(work: AssessorWork, *, in_campaign: bool = False) -> str | None:
    """The page of the work, inside its campaign (`in_campaign`, reading `work.topic.campaign`) or from the
    site's root; None where no installed app serves its kind."""
    page = registry.work_page(work.kind)
    if page is None:
        return None
    try:
        with site_root_urls(work.topic.campaign if in_campaign else None):
            return reverse(page.url_name, args=[work.pk])
    except NoReverseMatch:
        return None


def queue_items(*, user: User) -> list[QueueItem]:
    """The user's work of every campaign in queue order, each with its page, progress and time."""
    works = sorted(
        in_member_campaigns(AssessorWork.objects.unscoped().filter(assessor=user), user).select_related(
            "topic__campaign"
        ),
        key=lambda work: (_campaign_key(work), queue_key(work)),
    )
    in_campaign = len({work.topic.campaign_id for work in works}) > 1
    by_kind: dict[str, list[AssessorWork]] = defaultdict(list)
    for work in works:
        by_kind[work.kind].append(work)
    counts: dict[int, tuple[int, int]] = {}
    waiting: dict[int, str] = {}
    for kind, group in by_kind.items():
        page = registry.work_page(kind)
        if page and page.progress:
            counts.update(page.progress(group))
        if page and page.waiting:
            waiting.update(page.waiting([work for work in group if work.status != AssessorWork.Status.SUBMITTED]))
    items = []
    for work in works:
        page = registry.work_page(work.kind)
        done, total = counts.get(work.pk, (None, None))
        items.append(
            QueueItem(
                work=work,
                url=work_url(work, in_campaign=in_campaign),
                done=done,
                total=total,
                unit=page.unit if page else "",
                time_label=duration_label(work.active_seconds),
                waiting=waiting.get(work.pk, ""),
            )
        )
    return items


def queue_groups(items: list[QueueItem]) -> list[QueueGroup]:
    """The queue's items by campaign, in the queue's order."""
    return [
        QueueGroup(campaign=campaign, items=list(group))
        for campaign, group in groupby(items, key=lambda item: item.work.topic.campaign)
    ]


def next_work(*, user: User, after: AssessorWork) -> QueueItem | None:
    """The first open work in the user's queue other than `after`, with a page to go to."""
    for item in queue_items(user=user):
        if item.work.pk != after.pk and item.work.status != AssessorWork.Status.SUBMITTED and item.url:
            return item
    return None
