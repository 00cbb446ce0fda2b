"""Grade labels: how well a report answers one question of its topic's bank, from 0 to 5.

A label says who made it (`Provenance`: a person with their work, an LLM job, or a file) and which source
of the `question_grades` family it belongs to. The question is a stored nugget of a question bank. When a
bank is post-edited, the grades of a question removed or reworded are retired first (grades.dependents:
moved to RetiredGradeLabel, kept for the record, never scored): a grade of a question no longer asked, or
asked otherwise, counts for nothing, and the bank's size, the scores' denominator, follows the bank. The
foreign key cascades only for a question deleted without that step.
"""

from django.db import models

from assessor.models import LabelProvenance, Provenance
from assessor.models.keys import published_id
from assessor.models.scope import CampaignScopedManager

GRADES = range(6)
# The six grades as PrefNugget's grading prompt defines them.
GRADE_MEANINGS = {
    5: "The answer is highly relevant, complete, and accurate.",
    4: "The answer is mostly relevant and complete but may have minor gaps or inaccuracies.",
    3: "The answer is partially relevant and complete, with noticeable gaps or inaccuracies.",
    2: "The answer has limited relevance and completeness, with significant gaps or inaccuracies.",
    1: "The answer is minimally relevant or complete, with substantial shortcomings.",
    0: "The answer is not relevant or complete at all.",
}


class GradeLabel(LabelProvenance):
    topic = models.ForeignKey("assessor.Topic", on_delete=models.PROTECT, related_name="+")
    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    nugget = models.ForeignKey("nuggets.Nugget", on_delete=models.CASCADE, related_name="+")
    label = models.PositiveSmallIntegerField()  # the grade, 0-5 (`label` as every label model names it)
    confidence = models.FloatField(null=True, blank=True)
    reasoning = models.TextField(blank=True)
    # Grading the cited documents (instead of the report, or with it): the document whose grade was the highest.
    document = models.CharField(max_length=200, blank=True)
    # Grading the report with its cited documents: that document's grade, 0 where the report's grade (`label`)
    # was below the job's gate and no document was asked; null in every other way of grading.
    document_grade = models.PositiveSmallIntegerField(null=True, blank=True)

    # A source's name is its campaign's: inside a campaign, the labels of its sources only.
    objects = CampaignScopedManager["GradeLabel"]("source__campaign")

    class Meta:
        ordering = ["source_id", "answer_id", "nugget_id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "answer", "nugget"], name="one_grade_per_source_answer_question"),
            models.CheckConstraint(condition=models.Q(label__lte=5), name="grade_from_0_to_5"),
            models.CheckConstraint(condition=models.Q(document_grade__lte=5), name="document_grade_from_0_to_5"),
            Provenance.one_maker_constraint("grade_label_has_one_maker"),
        ]
        indexes = [models.Index(fields=["source", "topic"], name="grade_source_topic")]

    def __str__(self) -> str:
        return f"{published_id(self.topic_id)}: answer {self.answer_id}, question {self.nugget_id} -> {self.label}"


class RetiredGradeLabel(models.Model):
    """A grade taken out of scoring because its question was removed from its bank or reworded: kept for the
    record, with the question's text it was given for and its provenance as it was."""

    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    nugget_id = models.PositiveIntegerField()
    nugget_text = models.TextField()
    nugget_set = models.ForeignKey("nuggets.NuggetSet", null=True, on_delete=models.SET_NULL, related_name="+")
    source = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    label = models.PositiveSmallIntegerField()
    confidence = models.FloatField(null=True, blank=True)
    reasoning = models.TextField(blank=True)
    document = models.CharField(max_length=200, blank=True)
    document_grade = models.PositiveSmallIntegerField(null=True, blank=True)
    made_by = models.CharField(max_length=200)  # the grade's provenance, as Provenance.made_by reads
    made_at = models.DateTimeField()
    work = models.ForeignKey(
        "assessor.AssessorWork", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    seconds_spent = models.FloatField(null=True, blank=True)
    reason = models.CharField(max_length=20)  # removed, reworded, replaced
    retired_at = models.DateTimeField(auto_now_add=True)

    # A source's name is its campaign's: inside a campaign, the labels of its sources only.
    objects = CampaignScopedManager["RetiredGradeLabel"]("source__campaign")

    class Meta:
        ordering = ["-retired_at", "id"]

    def __str__(self) -> str:
        return f"{self.label} (question {self.nugget_id}, {self.reason})"
