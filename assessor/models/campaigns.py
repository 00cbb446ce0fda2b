"""Campaigns: a track's year (or any evaluation effort) with its own collection, rules, people and leaderboards.

A campaign owns its topics and requests, runs, sources, jobs, uploads and
studies (each such model has a `campaign` column, read through
`assessor.models.scope`). The corpus's segments are shared: a campaign
cites documents by their ids.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone


class Campaign(models.Model):
    slug = models.SlugField(max_length=50, unique=True)
    title = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    # The protocol families whose pages, jobs and sections the campaign shows, as the apps declare them
    # (`protocol_family` on an app's AppConfig: assessor.campaigns.services.protocol_families). Empty: every one.
    families = models.JSONField(default=list, blank=True)
    # An answer's limits, as the track sets them (TREC 2024 RAG: 400 words, 20 references). Empty: none; a
    # report's limits are its request's own.
    answer_word_limit = models.PositiveIntegerField(null=True, blank=True)
    answer_reference_cap = models.PositiveIntegerField(null=True, blank=True)
    guidelines = models.TextField(blank=True)
    # The endpoint the campaign's jobs use when none is named (empty: the deployment's `default`).
    default_endpoint = models.CharField(max_length=50, blank=True)
    # What its topics' stored keys end with: nothing for the first campaign (so a database made before campaigns
    # keeps every key), "@<slug>" for the others. Topic ids never hold "@" (assessor.models.keys).
    key_suffix = models.CharField(max_length=60, unique=True, blank=True, editable=False)
    # A closed campaign is read-only: no new labels or jobs; its pages and downloads still work.
    closed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return self.title or self.slug

    @property
    def is_closed(self) -> bool:
        return self.closed_at is not None

    def uses(self, family: str) -> bool:
        """Whether the campaign uses this protocol family (one that names none uses all)."""
        return not self.families or family in self.families


class CampaignMember(models.Model):
    """A person of a campaign: its organizers organize it, its assessors get its work (their role is the site's)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="campaign_memberships")
    added_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["campaign_id", "user_id"]
        constraints = [models.UniqueConstraint(fields=["campaign", "user"], name="one_membership_per_campaign")]

    def __str__(self) -> str:
        return f"{self.user} in {self.campaign}"
