"""Who or what made a record: a person, an LLM job, or an imported file."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from assessor.models.scope import CampaignScopedManager, campaign_default
from assessor.registry import registry


class ImportBatch(models.Model):
    """One imported file: the provenance of every row it created."""

    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="+"
    )
    # An importer's kind (assessor.registry.Importer), declared by the app that reads such files.
    kind = models.CharField(max_length=50)
    file_name = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64, db_index=True)
    options = models.JSONField(default=dict, blank=True)
    imported_at = models.DateTimeField(default=timezone.now)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lines = models.PositiveIntegerField(default=0)
    created = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    replaced = models.PositiveIntegerField(default=0)
    warnings = models.JSONField(default=list, blank=True)

    objects = CampaignScopedManager["ImportBatch"]()

    class Meta:
        ordering = ["-imported_at"]
        verbose_name_plural = "import batches"

    def __str__(self) -> str:
        return f"{self.kind} from {self.file_name}"

    @property
    def kind_label(self) -> str:
        return registry.import_label(self.kind)


class Provenance(models.Model):
    """Fields every nugget, nugget set and label carries.

    Exactly one of `created_by`, `job` and `imported_from` is set; for people,
    `seconds_spent` is the active time the server measured for this record.
    """

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    job = models.ForeignKey("assessor.Job", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    imported_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    seconds_spent = models.FloatField(null=True, blank=True)

    class Meta:
        abstract = True

    @classmethod
    def one_maker_constraint(cls, name: str) -> models.CheckConstraint:
        person = models.Q(created_by__isnull=False, job__isnull=True, imported_from__isnull=True)
        machine = models.Q(created_by__isnull=True, job__isnull=False, imported_from__isnull=True)
        file = models.Q(created_by__isnull=True, job__isnull=True, imported_from__isnull=False)
        return models.CheckConstraint(condition=person | machine | file, name=name)

    @property
    def made_by(self) -> str:
        if self.created_by_id:
            return f"user:{self.created_by}"
        if self.job_id:
            return f"job:{self.job_id}"
        return f"file:{self.imported_from}"


class LabelProvenance(Provenance):
    """What every label carries beside its maker: the label source its name belongs to (assessor.models.sources:
    its kind and provenance) and, for a person's label, the piece of work it was made in (blindness and the
    lifecycle read it)."""

    source = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    work = models.ForeignKey("assessor.AssessorWork", null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    class Meta:
        abstract = True
