"""Who may see a campaign: the one rule, under the roles (`assessor.work.roles`).

A person sees a campaign they are a member of; the site's administrators see
every campaign. Their own work too is theirs only in the campaigns they belong
to (`assessor.work.access.in_member_campaigns`). Everything of a campaign a
person does not see answers "not found" (404): pages are reached inside a
campaign's scope, whose managers cannot find another campaign's rows
(`assessor.models.scope`).
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Exists, OuterRef, QuerySet

from assessor.models import Campaign, CampaignMember
from assessor.work.roles import Role, user_role


class CampaignClosed(PermissionError):
    """A closed campaign takes no new labels, jobs or imports."""

    def __init__(self, campaign: Campaign) -> None:
        super().__init__(f"The campaign {campaign.slug!r} is closed: its labels, jobs and files can no longer change.")
        self.campaign = campaign


def sees_every_campaign(user: User | AnonymousUser) -> bool:
    return user_role(user) == Role.ADMIN


def campaigns_with_membership(user: User | AnonymousUser) -> QuerySet[Campaign]:
    """Every campaign, oldest first, each with `is_member`: whether `user` belongs to it."""
    member = Exists(CampaignMember.objects.filter(campaign=OuterRef("pk"), user_id=user.pk or 0))
    return Campaign.objects.annotate(is_member=member).order_by("created_at", "pk")


def campaigns_visible(user: User | AnonymousUser) -> QuerySet[Campaign]:
    """The campaigns `user` sees, each with `is_member`, oldest first."""
    campaigns = campaigns_with_membership(user)
    return campaigns if sees_every_campaign(user) else campaigns.filter(is_member=True)  # type: ignore[misc]


def campaign_visible(user: User | AnonymousUser, campaign: Campaign) -> bool:
    """Whether `user` sees `campaign` (`campaign.is_member` read already when it came from `campaigns_visible`)."""
    if sees_every_campaign(user):
        return True
    is_member = getattr(campaign, "is_member", None)
    if is_member is None:
        is_member = CampaignMember.objects.filter(campaign=campaign, user_id=user.pk or 0).exists()
    return bool(is_member)


def campaign_writable(campaign: Campaign) -> None:
    """Refuse a change to a closed campaign."""
    if campaign.is_closed:
        raise CampaignClosed(campaign)


def member_add(campaign: Campaign, user: User) -> None:
    CampaignMember.objects.get_or_create(campaign=campaign, user=user)
