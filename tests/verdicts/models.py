"""A verdict: does this answer answer its topic's query? Yes or no, by whom or what (Provenance)."""

from django.db import models

from assessor.models import Provenance


class Verdict(Provenance):
    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    # The label source its name belongs to: people's work, an LLM, or imported files.
    source = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    # A person's verdict: the work it was made in (the lifecycle counts it once that work is submitted).
    work = models.ForeignKey("assessor.AssessorWork", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    # The judging core (assessor.work.judging) reads and writes `label` and `seconds_spent`.
    label = models.CharField(max_length=3, choices=[("yes", "yes"), ("no", "no")])

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "answer"], name="one_verdict_per_source_and_answer"),
            Provenance.one_maker_constraint("verdict_has_one_maker"),
            models.CheckConstraint(condition=models.Q(label__in=["yes", "no"]), name="verdict_is_yes_or_no"),
        ]
