"""A verdict: does this answer answer its topic's query? Yes or no, by a person, an LLM job or a file.

The kinds are the strings the foundation stores for the app (docs/architecture.md, "Kinds are the apps' strings").
"""

from django.db import models

from assessor.models import LabelProvenance

VERDICT_JOB = "answer_verdict"  # a job: an LLM says whether each answer answers its query
VERDICT_WORK = "verdict_manual"  # work: a person says so, an answer a page
LABELS = ("yes", "no")


class Verdict(LabelProvenance):
    """Its maker, source and work are LabelProvenance's; the kit reads and writes `answer` and `label`."""

    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    label = models.CharField(max_length=3, choices=[(label, label) for label in LABELS])

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "answer"], name="one_verdict_per_source_and_answer"),
            LabelProvenance.one_maker_constraint("verdict_has_one_maker"),
            models.CheckConstraint(condition=models.Q(label__in=LABELS), name="verdict_is_yes_or_no"),
        ]
