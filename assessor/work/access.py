"""The one access rule for an assessor's work: their own, of the kind the page or service handles.

Every assessor view and service reaches a piece of work through `assessor_work`
before it reads or writes anything of it. Another person's work, or work of
another kind, is "not found": its existence is not revealed. Inside a campaign's
pages the work is also that campaign's (the scoped manager); an assessor's own
pages reach their work in every campaign they belong to (`in_member_campaigns`).

A change to work (a label, a nugget edit, a submit: every read with `lock`) is
refused while the work's campaign is closed: a closed campaign is read-only.
"""

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import F, QuerySet
from django.http import Http404

from assessor.models import AssessorWork, Campaign


class WorkNotFound(Http404):
    """No work of this id is the asking assessor's, of the kinds asked for."""


class CampaignClosedForChanges(PermissionDenied):
    """A change asked of a closed campaign: its labels, jobs and files can no longer change.

    The assessors' pages answer it as a conflict with the message (their scripts show it and keep nothing to
    retry); anywhere else it is a 403."""

    def __init__(self, campaign: Campaign) -> None:
        self.message = campaign_closed_message(campaign)
        self.campaign = campaign
        super().__init__(self.message)


def campaign_closed_message(campaign: Campaign) -> str:
    return f"The campaign {campaign.title!r} is closed: its labels, jobs and files can no longer change."


def campaign_closed_reason(campaign: Campaign | None) -> str:
    """Why `campaign` (the page's) takes no change, closed; empty while it is open (or None)."""
    return campaign_closed_message(campaign) if campaign is not None and campaign.is_closed else ""


def work_campaign_open_check(*, topic_id: str, closed_at: datetime | None) -> None:
    """Refuse a change to the work of topic `topic_id`, whose campaign's `closed_at` the locking read fetched."""
    if closed_at is not None:
        raise CampaignClosedForChanges(Campaign.objects.get(topics=topic_id))


def in_member_campaigns(works: QuerySet[AssessorWork], user: User | AnonymousUser) -> QuerySet[AssessorWork]:
    """`works` of the campaigns `user` belongs to. Taken out of a campaign, a person no longer reaches its work,
    their own included (giving work makes its assessor a member). A join, not another query."""
    return in_campaigns_of(works, user.pk or 0)


def in_campaigns_of(works: QuerySet[AssessorWork], user_id: int) -> QuerySet[AssessorWork]:
    """`in_member_campaigns` by the person's id, for a query written once with the id as its parameter
    (`assessor.work.judging`'s save)."""
    return works.filter(topic__campaign__members__user_id=user_id)


def assessor_work(
    *,
    work_id: int,
    user: User,
    kinds: Sequence[str],
    lock: bool = False,
    related: Sequence[str] = ("topic__campaign",),
) -> AssessorWork:
    """The assessor's own work `work_id` of one of `kinds`, with `related` (its topic and the topic's campaign) read
    in the same query; locked for update with `lock`, for a change, which a closed campaign refuses
    (`CampaignClosedForChanges`)."""
    # The campaign comes with the topic: every work page shows its guidelines (templates/work/judge_frame.html),
    # and the join is one the membership filter makes anyway.
    # No names is no join (select_related() without them would follow every relation).
    works = AssessorWork.objects.select_related(*related) if related else AssessorWork.objects.all()
    if lock:
        # "of=self": lock the work's row only, not the rows joined for reading; the campaign's state in the same read.
        works = works.select_for_update(of=("self",)).annotate(campaign_closed_at=F("topic__campaign__closed_at"))
    try:
        work = in_member_campaigns(works, user).get(pk=work_id, assessor_id=user.pk, kind__in=list(kinds))
    except AssessorWork.DoesNotExist:
        raise WorkNotFound("No such work of yours.") from None
    if lock:
        work_campaign_open_check(topic_id=work.topic_id, closed_at=work.campaign_closed_at)  # type: ignore[attr-defined]
    return work
