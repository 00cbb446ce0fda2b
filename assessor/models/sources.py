"""Label sources: who or what stands behind a name that labels are stored under.

A nugget set name, an assigner, a support method and a qrels source name all
name a source. The source is a row, made the first time something writes
under the name, and it owns the name from then on: people's work, one LLM
(endpoint, model and prompt versions), or imported files. What a page shows,
blinds or scores is decided from the source's kind and the label's own
provenance (the work or job that made it), never from the name.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from assessor.models.scope import CampaignScopedManager, campaign_default
from assessor.registry import registry


class LabelSource(models.Model):
    class Kind(models.TextChoices):
        PERSON = "person", "people's work"
        LLM = "llm", "an LLM"
        FILE = "file", "imported files"

    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="+"
    )
    # A family an app declares (assessor.registry.LabelFamily): "nuggets", "qrels"...
    family = models.CharField(max_length=50)
    name = models.SlugField(max_length=100)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    # An LLM source: the model, its endpoint and the prompt versions every job writing here used.
    model = models.CharField(max_length=200, blank=True)
    endpoint_name = models.CharField(max_length=50, blank=True)
    endpoint = models.CharField(max_length=500, blank=True)
    prompt_versions = models.JSONField(default=dict, blank=True)
    # The job or file that made it (later jobs and files writing here are on each label).
    job = models.ForeignKey("assessor.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    imported_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    # A second person's independent judging of the same items as this earlier people's source
    # (inter-assessor agreement): its labels are the replicate's, compared with the first's.
    replicate_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="replicates")
    # Items whose labels a change of their inputs took away, to be labelled again:
    # {"<nugget set name>": {"<topic id>": [nugget ids]}}. Empty: up to date.
    stale = models.JSONField(default=dict, blank=True)

    objects = CampaignScopedManager["LabelSource"]()

    class Meta:
        ordering = ["family", "name"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "family", "name"], name="one_source_per_family_and_name")
        ]

    def __str__(self) -> str:
        return f"{self.family_label} {self.name!r} ({self.get_kind_display()})"

    @property
    def family_label(self) -> str:
        return registry.family_label(self.family)

    @property
    def is_human(self) -> bool:
        return self.kind == self.Kind.PERSON

    @property
    def stale_topics(self) -> list[str]:
        return sorted({topic for topics in self.stale.values() for topic in topics})
