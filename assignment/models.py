"""Nugget assignment labels: does an answer support a nugget?"""

from django.db import models

from assessor.models import LabelProvenance, Provenance
from assessor.models.scope import CampaignScopedManager


class AssignmentLabelManager(CampaignScopedManager["AssignmentLabel"]):
    """An assigner's name is its campaign's (its label source): inside a campaign, that campaign's labels. The
    path is the class's, so that the related managers Django derives from it (nugget.labels) filter on it too."""

    def __init__(self) -> None:
        super().__init__("source__campaign")


class AssignmentLabel(LabelProvenance):
    class Label(models.TextChoices):
        SUPPORT = "support"
        PARTIAL_SUPPORT = "partial_support"
        NOT_SUPPORT = "not_support"

    class AssignerKind(models.TextChoices):
        MANUAL = "manual", "ManualAssign"
        AUTO = "auto", "AutoAssign"

    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="assignment_labels")
    nugget = models.ForeignKey("nuggets.Nugget", on_delete=models.CASCADE, related_name="labels")
    # Defaults to the kind; names several assigners of one kind (AutoAssign by two models).
    assigner = models.SlugField(max_length=100)
    assigner_kind = models.CharField(max_length=10, choices=AssignerKind.choices)
    label = models.CharField(max_length=16, choices=Label.choices)

    objects = AssignmentLabelManager()

    class Meta:
        ordering = ["answer_id", "nugget__position"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "nugget", "assigner"], name="one_label_per_assigner"),
            Provenance.one_maker_constraint("assignment_label_has_one_maker"),
        ]
        indexes = [models.Index(fields=["assigner", "nugget"])]

    def __str__(self) -> str:
        return f"{self.label} ({self.assigner})"


class RetiredAssignmentLabel(models.Model):
    """A label taken out of scoring because its nugget was removed or reworded: kept for the record.

    The nugget's text is copied (the nugget may be gone); the label's
    provenance is kept as it was.
    """

    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    nugget_id = models.PositiveIntegerField()
    nugget_text = models.TextField()
    nugget_set = models.ForeignKey("nuggets.NuggetSet", null=True, on_delete=models.SET_NULL, related_name="+")
    source = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    assigner = models.SlugField(max_length=100)
    label = models.CharField(max_length=16, choices=AssignmentLabel.Label.choices)
    made_by = models.CharField(max_length=200)  # the label's provenance, as Provenance.made_by reads
    made_at = models.DateTimeField()
    work = models.ForeignKey(
        "assessor.AssessorWork", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    seconds_spent = models.FloatField(null=True, blank=True)
    reason = models.CharField(max_length=20)  # removed, reworded, replaced
    retired_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-retired_at", "id"]

    def __str__(self) -> str:
        return f"{self.label} ({self.assigner}, {self.reason})"
