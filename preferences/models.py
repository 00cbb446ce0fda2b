"""Preference labels: which of two reports on a topic answers its request better.

A label is kept once, in the order the pair was shown (the first report was passage 1); the flipped
copy the reference adds for Borda is computed, never stored. Its source says who made it: an LLM job
(with the call log behind it), a person's work, or a file.
"""

from django.db import models

from assessor.models import LabelProvenance
from assessor.models.keys import published_id
from assessor.models.scope import CampaignScopedManager


class Preference(models.IntegerChoices):
    TIE = 0, "tie"
    FIRST = 1, "first better"
    SECOND = 2, "second better"


class PreferenceLabel(LabelProvenance):
    """Its maker (a person, with the work it was made in and the active seconds; an LLM job; a file) and its source
    are LabelProvenance's."""

    topic = models.ForeignKey("assessor.Topic", on_delete=models.PROTECT, related_name="+")
    first = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    second = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    # None: the answer named no preference the prompt allows (the reference's -1), kept for the record and
    # dropped, as ties are, from Borda and the banks built on it.
    label = models.PositiveSmallIntegerField(choices=Preference.choices, null=True, blank=True)
    confidence = models.FloatField(null=True, blank=True)
    reasoning = models.TextField(blank=True)

    # A source's name is its campaign's: inside a campaign, the labels of its sources only.
    objects = CampaignScopedManager["PreferenceLabel"]("source__campaign")

    class Meta:
        ordering = ["source_id", "topic_id", "first_id", "second_id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "first", "second"], name="one_preference_per_source_and_pair"),
            models.CheckConstraint(condition=~models.Q(first=models.F("second")), name="preference_of_two_reports"),
            LabelProvenance.one_maker_constraint("preference_has_one_maker"),
        ]
        indexes = [models.Index(fields=["source", "topic"], name="preference_source_topic")]

    def __str__(self) -> str:
        return f"{published_id(self.topic_id)}: {self.first_id} vs {self.second_id} -> {self.label}"
