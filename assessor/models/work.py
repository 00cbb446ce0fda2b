"""What an organizer gives an assessor to do on a topic, and the time it took."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from assessor.models.scope import CampaignScopedManager
from assessor.registry import registry


class AssessorWork(models.Model):
    class Status(models.TextChoices):
        NOT_STARTED = "not_started", "not started"
        IN_PROGRESS = "in_progress", "in progress"
        SUBMITTED = "submitted", "submitted"

    topic = models.ForeignKey("assessor.Topic", on_delete=models.PROTECT, related_name="work")
    assessor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="work")
    # A kind an app declares (assessor.registry.WorkPage); the foundation knows none of them.
    kind = models.CharField(max_length=50)
    # The nugget set this work creates or labels against, by name (see nuggets.NuggetSet.name).
    nugget_set_name = models.CharField(max_length=100, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.NOT_STARTED)
    active_seconds = models.FloatField(default=0)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    reopened_count = models.PositiveSmallIntegerField(default=0)
    # The label source this work's labels or nuggets go into (a person's source).
    source = models.ForeignKey(
        "assessor.LabelSource", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Reopened for some items only: {"nuggets": {"<id>": "reworded"}, "why": "..."}; empty otherwise.
    redo = models.JSONField(default=dict, blank=True)
    # Optimistic concurrency: every change bumps it; a stale tab gets a conflict.
    version = models.PositiveIntegerField(default=0)
    # The organizers' notes for this work (what to watch for in this topic or campaign),
    # shown to the assessor beside the guidelines.
    notes = models.TextField(blank=True)
    # A judging of the topic blind to earlier labels (a replicate of a human condition, or a
    # study's re-judging): its assessor made none of them, and it stands beside the topic's own work.
    independent = models.BooleanField(default=False)
    # The items this work is restricted to, in the order they are shown (a study's sample):
    # support: first-citation ids; nugget assignment: [answer id, nugget id] pairs. Empty: the whole topic.
    items = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    # Not a column: the time spent, as the organizer's pages show it, set by them.
    time_label: str

    objects = CampaignScopedManager["AssessorWork"]("topic__campaign")

    class Meta:
        ordering = ["topic_id", "kind"]
        constraints = [
            models.UniqueConstraint(
                fields=["topic", "kind"], condition=models.Q(independent=False), name="one_assessor_per_topic_and_kind"
            ),
            models.UniqueConstraint(fields=["topic", "kind", "source"], name="one_work_per_topic_kind_and_source"),
        ]

    def __str__(self) -> str:
        return f"{self.kind_label} {self.topic_id} ({self.assessor})"

    @property
    def kind_label(self) -> str:
        return registry.work_label(self.kind)


class WorkEvent(models.Model):
    """Submits, reopenings and other state changes of a piece of work, kept for the record."""

    work = models.ForeignKey(AssessorWork, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(default=timezone.now)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=30)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["work_id", "at"]


class WorkOperation(models.Model):
    """A save the page's script sent with an id of its own, kept so that a replay is applied once.

    The script retries a save whose answer it did not get; the retry carries the
    same id and is answered with what the first attempt stored.
    """

    work = models.ForeignKey(AssessorWork, on_delete=models.CASCADE, related_name="operations")
    op_id = models.CharField(max_length=64)
    answer = models.JSONField(default=dict, blank=True)  # what the first attempt answered
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["work", "op_id"], name="work_operation_once")]

    def __str__(self) -> str:
        return f"{self.work_id}:{self.op_id}"
