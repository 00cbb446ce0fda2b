"""Support labels: does a cited segment support the sentence that cites it?"""

from django.db import models

from assessor.models import LabelProvenance, Provenance
from assessor.models.scope import CampaignScopedManager


class SupportLabelManager(CampaignScopedManager["SupportLabel"]):
    """A method's name is its campaign's (its label source): inside a campaign, that campaign's labels. The path
    is the class's, so that the related managers Django derives from it (citation.support_labels) filter on it."""

    def __init__(self) -> None:
        super().__init__("source__campaign")


class SupportLabel(LabelProvenance):
    class Label(models.IntegerChoices):
        # The numbers are those of the NIST support files.
        UNJUDGED = -1, "unjudged"
        NS = 0, "no support"
        PS = 1, "partial support"
        FS = 2, "full support"

    class MethodKind(models.TextChoices):
        SCRATCH = "scratch", "manual from scratch"
        POSTEDIT = "postedit", "manual with post-editing"
        AUTO = "auto", "automatic"

    citation = models.ForeignKey("assessor.Citation", on_delete=models.CASCADE, related_name="support_labels")
    # Defaults to the kind; names several judges of one kind.
    method = models.SlugField(max_length=100)
    method_kind = models.CharField(max_length=10, choices=MethodKind.choices)
    label = models.SmallIntegerField(choices=Label.choices)
    # Post-editing: the LLM label the assessor was shown (and its source), kept beside the final one.
    shown_label = models.SmallIntegerField(choices=Label.choices, null=True, blank=True)
    shown_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="post_edits")

    objects = SupportLabelManager()

    class Meta:
        ordering = ["citation_id"]
        constraints = [
            models.UniqueConstraint(fields=["citation", "method"], name="one_support_label_per_method"),
            models.CheckConstraint(condition=models.Q(label__gte=-1, label__lte=2), name="support_label_range"),
            Provenance.one_maker_constraint("support_label_has_one_maker"),
        ]
        indexes = [models.Index(fields=["method", "citation"])]

    @property
    def changed(self) -> bool | None:
        if self.shown_label is None:
            return None
        return self.shown_label != self.label
