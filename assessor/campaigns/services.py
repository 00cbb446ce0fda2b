"""Making, describing and closing campaigns."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.apps import apps
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from assessor.models import (
    AssessorWork,
    Campaign,
    CampaignMember,
    ImportBatch,
    Job,
    LabelSource,
    QrelSource,
    Run,
    Topic,
)
from assessor.models.keys import KEY_SEPARATOR


class CampaignRefused(ValueError):
    pass


def protocol_families() -> list[str]:
    """The protocol families the installed apps declare (`protocol_family` on their AppConfig), sorted."""
    return sorted({family for config in apps.get_app_configs() if (family := getattr(config, "protocol_family", ""))})


# What the campaign's pages' URLs hold (/c/<slug>/, assessor.campaigns.middleware).
SLUG = re.compile(r"[a-z0-9][-a-z0-9_]{0,49}")
SLUG_RULE = "lower-case letters, digits, '-' and '_', starting with a letter or a digit, at most 50"


def campaign_create(
    *,
    slug: str,
    title: str,
    families: list[str] | None = None,
    description: str = "",
    answer_word_limit: int | None = None,
    answer_reference_cap: int | None = None,
    guidelines: str = "",
    default_endpoint: str = "",
) -> Campaign:
    """A new campaign. Its topics' keys end with "@<slug>", unless it is the first (assessor.models.keys)."""
    if not SLUG.fullmatch(slug):
        raise CampaignRefused(f"the slug {slug!r}: {SLUG_RULE}")
    known = protocol_families()
    unknown = sorted(set(families or []) - set(known))
    if unknown:
        raise CampaignRefused(
            f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}: choose among {', '.join(known)}"
        )
    if not title.strip():
        raise CampaignRefused("a campaign needs a title")
    try:
        with transaction.atomic():
            first = not Campaign.objects.filter(key_suffix="").exists()
            return Campaign.objects.create(
                slug=slug,
                title=title.strip(),
                families=list(families or []),
                description=description,
                answer_word_limit=answer_word_limit,
                answer_reference_cap=answer_reference_cap,
                guidelines=guidelines,
                default_endpoint=default_endpoint,
                key_suffix="" if first else KEY_SEPARATOR + slug,
            )
    except IntegrityError:
        raise CampaignRefused(f"there is a campaign {slug!r} already") from None


def campaign_close(campaign: Campaign) -> bool:
    """Make the campaign read-only; False if it was closed already."""
    return bool(Campaign.objects.filter(pk=campaign.pk, closed_at__isnull=True).update(closed_at=timezone.now()))


def campaign_reopen(campaign: Campaign) -> bool:
    return bool(Campaign.objects.filter(pk=campaign.pk, closed_at__isnull=False).update(closed_at=None))


def members_add(campaign: Campaign, users: list[User]) -> int:
    """Make `users` members of `campaign`; the number that were not yet."""
    return sum(CampaignMember.objects.get_or_create(campaign=campaign, user=user)[1] for user in users)


def members_remove(campaign: Campaign, users: list[User]) -> int:
    """Take `users` out of `campaign`; the number that were members. Their work in it stays, labels and all, out
    of their reach (`assessor.work.access.in_member_campaigns`) until they are added again."""
    removed, _ = CampaignMember.objects.filter(campaign=campaign, user__in=users).delete()
    return removed


@dataclass(frozen=True)
class CampaignCounts:
    topics: int
    runs: int
    sources: int
    qrel_sources: int
    jobs: int
    imports: int
    work: int
    work_submitted: int
    organizers: int
    assessors: int


def campaign_counts(campaign: Campaign) -> CampaignCounts:
    """What a campaign holds, counted whatever the scope."""
    members = CampaignMember.objects.filter(campaign=campaign)
    work = AssessorWork.objects.unscoped().filter(topic__campaign=campaign)
    return CampaignCounts(
        topics=Topic.objects.unscoped().filter(campaign=campaign).count(),
        runs=Run.objects.unscoped().filter(campaign=campaign).count(),
        sources=LabelSource.objects.unscoped().filter(campaign=campaign).count(),
        qrel_sources=QrelSource.objects.unscoped().filter(campaign=campaign).count(),
        jobs=Job.objects.unscoped().filter(campaign=campaign).count(),
        imports=ImportBatch.objects.unscoped().filter(campaign=campaign).count(),
        work=work.count(),
        work_submitted=work.filter(status=AssessorWork.Status.SUBMITTED).count(),
        organizers=members.filter(user__groups__name__in=["organizer", "admin"]).distinct().count(),
        assessors=members.filter(user__groups__name="assessor").distinct().count(),
    )
