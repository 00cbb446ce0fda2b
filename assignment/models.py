"""Nugget assignment labels: does an answer support a nugget?"""

from django.db import models

from assessor.models import Provenance


class AssignmentLabel(Provenance):
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

    class Meta:
        ordering = ["answer_id", "nugget__position"]
        constraints = [
            models.UniqueConstraint(fields=["answer", "nugget", "assigner"], name="one_label_per_assigner"),
            Provenance.one_maker_constraint("assignment_label_has_one_maker"),
        ]
        indexes = [models.Index(fields=["assigner", "nugget"])]

    def __str__(self) -> str:
        return f"{self.label} ({self.assigner})"
