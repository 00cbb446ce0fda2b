"""`--campaign SLUG` on every command of the project: the command runs inside that campaign.

It may be left out while exactly one campaign exists. A command that writes
(`campaign_writes`) refuses a closed campaign.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from assessor.campaigns.access import CampaignClosed, campaign_writable
from assessor.models import Campaign
from assessor.models.scope import CampaignRequired, campaign_in_effect, campaign_scope


def campaign_named(slug: str | None) -> Campaign:
    """The campaign `slug`, or the only one when `slug` is None; a CommandError saying which there are."""
    if slug is None:
        try:
            return campaign_in_effect()
        except CampaignRequired:
            raise CommandError(f"There are several campaigns: name one with --campaign ({campaign_slugs()}).") from None
    found = Campaign.objects.filter(slug=slug).first()
    if found is None:
        raise CommandError(f"No campaign {slug!r}: there is {campaign_slugs()}.")
    return found


def campaign_slugs() -> str:
    return ", ".join(Campaign.objects.order_by("pk").values_list("slug", flat=True)) or "none"


class CampaignCommand(BaseCommand):
    """A command of one campaign: `--campaign SLUG` (or the only one) is the scope its work is done in."""

    # Whether the command adds or changes labels, jobs or files: refused in a closed campaign.
    campaign_writes = False

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.add_argument(
            "--campaign",
            default=None,
            metavar="SLUG",
            help="the campaign to work in (may be left out while there is only one)",
        )
        return parser

    def execute(self, *args: Any, **options: Any) -> Any:
        campaign = campaign_named(options.get("campaign"))
        if self.campaign_writes:
            try:
                campaign_writable(campaign)
            except CampaignClosed as closed:
                raise CommandError(str(closed)) from None
        with campaign_scope(campaign):
            return super().execute(*args, **options)
