"""An uploaded file waiting for, going through, or done with its import by a worker."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from assessor.models.scope import CampaignScopedManager, campaign_default
from assessor.registry import registry


class Upload(models.Model):
    """One file an organizer uploaded: what was asked, how far its import got, and how it ended.

    The file itself waits under `UPLOAD_DIR` until a worker imports it; it is
    deleted once the import succeeds and kept after a failure, for a retry.
    """

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="+"
    )
    kind = models.CharField(max_length=50)  # an importer's kind (assessor.registry.Importer)
    # The upload form's options for this kind, as chosen (replace, source, names...).
    options = models.JSONField(default=dict, blank=True)
    file_name = models.CharField(max_length=255)  # as uploaded, without a folder
    size = models.PositiveBigIntegerField(default=0)
    state = models.CharField(max_length=10, choices=State.choices, default=State.QUEUED, db_index=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    claimed_by = models.CharField(max_length=200, blank=True)
    # How far the last attempt got (while it runs, the progress file says more: assessor.collection.uploads).
    lines_read = models.PositiveBigIntegerField(default=0)
    rows_written = models.PositiveBigIntegerField(default=0)
    # The result of a successful import (the batch is None when the file added nothing).
    batch = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lines = models.PositiveBigIntegerField(default=0)
    created = models.PositiveBigIntegerField(default=0)
    unchanged = models.PositiveBigIntegerField(default=0)
    replaced = models.PositiveBigIntegerField(default=0)
    warnings = models.JSONField(default=list, blank=True)
    # Why it failed: the place (line and field, when a line was at fault) and the problem.
    error_line = models.PositiveBigIntegerField(null=True, blank=True)
    error_field = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)

    objects = CampaignScopedManager["Upload"]()

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"upload {self.pk} {self.kind} {self.file_name} ({self.state})"

    @property
    def kind_label(self) -> str:
        return registry.import_label(self.kind)

    @property
    def finished(self) -> bool:
        return self.state in (self.State.DONE, self.State.FAILED)
