"""ARGUE-style judgments of reports: yes/no questions, each answered by a person, an LLM job or a file.

- `SupportAttestation`: does a cited document support the sentence that cites it?
- `AnswerAttestation`: does a sentence agree with one gold answer of one question of the bank?
- `UncitedAttestation`: of a sentence that cites nothing, does it need a citation, is it the first instance
  of its claim, is it a negative assertion (`SentenceCheck`)?

`JudgedReport` records that a source judged a report against a bank: how many of its sentences the
request's limit kept (the cut), whether every gold answer was checked or only those whose documents a
sentence cites, and whether uncited negative assertions were judged. Scores are computed from the judged
reports, so a report judged with no "yes" at all still counts (0), and a source's judgments of one report
are all made against one bank.
"""

from django.db import models

from assessor.models import LabelProvenance, Provenance
from assessor.models.scope import CampaignScopedManager


class YesNo(models.TextChoices):
    YES = "yes", "yes"
    NO = "no", "no"


class JudgedReport(Provenance):
    source = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    work = models.ForeignKey("assessor.AssessorWork", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    bank = models.SlugField(max_length=100)  # the name of the question bank judged against
    kept = models.PositiveSmallIntegerField()  # sentences kept from the first by the request's limit
    check_all = models.BooleanField(default=False)  # every gold answer checked, not only the cited ones'
    negatives = models.BooleanField(default=False)  # ARGUE's negative assertions judged (an option, off by default)
    # Yes/no answers of an LLM that were neither after a re-ask (counted as no).
    malformed = models.PositiveIntegerField(default=0)
    # The bank's questions (nugget ids) as they were when the report was judged: a bank edited since is told.
    questions = models.JSONField(default=list, blank=True)

    # A source's name is its campaign's: inside a campaign, the labels of its sources only.
    objects = CampaignScopedManager["JudgedReport"]("source__campaign")

    class Meta:
        ordering = ["source_id", "answer_id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "answer"], name="one_argue_report_per_source"),
            Provenance.one_maker_constraint("argue_report_has_one_maker"),
        ]

    def __str__(self) -> str:
        return f"report {self.answer_id} against {self.bank} ({self.kept} sentences kept)"


class SupportAttestation(LabelProvenance):
    citation = models.ForeignKey("assessor.Citation", on_delete=models.CASCADE, related_name="+")
    # Blank: the document has no text to judge it by (not judged; scored as no).
    label = models.CharField(max_length=3, choices=YesNo.choices, blank=True)
    reasoning = models.TextField(blank=True)

    # A source's name is its campaign's: inside a campaign, the labels of its sources only.
    objects = CampaignScopedManager["SupportAttestation"]("source__campaign")

    class Meta:
        ordering = ["source_id", "citation_id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "citation"], name="one_support_attestation_per_source"),
            Provenance.one_maker_constraint("support_attestation_has_one_maker"),
            models.CheckConstraint(condition=models.Q(label__in=["yes", "no", ""]), name="support_attestation_label"),
        ]

    def __str__(self) -> str:
        return f"citation {self.citation_id}: {self.label or 'not judged'}"


class AnswerAttestation(LabelProvenance):
    sentence = models.ForeignKey("assessor.Sentence", on_delete=models.CASCADE, related_name="+")
    question = models.ForeignKey("nuggets.Nugget", on_delete=models.CASCADE, related_name="+")
    answer_index = models.PositiveSmallIntegerField()  # the gold answer's position in its question
    label = models.CharField(max_length=3, choices=YesNo.choices)
    reasoning = models.TextField(blank=True)

    # A source's name is its campaign's: inside a campaign, the labels of its sources only.
    objects = CampaignScopedManager["AnswerAttestation"]("source__campaign")

    class Meta:
        ordering = ["source_id", "sentence_id", "question_id", "answer_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "sentence", "question", "answer_index"], name="one_answer_attestation_per_source"
            ),
            Provenance.one_maker_constraint("answer_attestation_has_one_maker"),
            models.CheckConstraint(condition=models.Q(label__in=["yes", "no"]), name="answer_attestation_label"),
        ]

    def __str__(self) -> str:
        return f"sentence {self.sentence_id} / question {self.question_id}.{self.answer_index}: {self.label}"


class SentenceCheck(models.TextChoices):
    """The questions asked of a sentence that cites nothing."""

    NEEDS_CITATION = "needs_citation", "needs a citation"
    FIRST_INSTANCE = "first_instance", "first instance of its claim"
    NEGATIVE = "negative", "negative assertion"


class UncitedAttestation(LabelProvenance):
    sentence = models.ForeignKey("assessor.Sentence", on_delete=models.CASCADE, related_name="+")
    asked = models.CharField(max_length=20, choices=SentenceCheck.choices)  # which question
    label = models.CharField(max_length=3, choices=YesNo.choices)
    reasoning = models.TextField(blank=True)

    # A source's name is its campaign's: inside a campaign, the labels of its sources only.
    objects = CampaignScopedManager["UncitedAttestation"]("source__campaign")

    class Meta:
        ordering = ["source_id", "sentence_id", "asked"]
        constraints = [
            models.UniqueConstraint(fields=["source", "sentence", "asked"], name="one_uncited_attestation_per_source"),
            Provenance.one_maker_constraint("uncited_attestation_has_one_maker"),
            models.CheckConstraint(condition=models.Q(label__in=["yes", "no"]), name="uncited_attestation_label"),
        ]

    def __str__(self) -> str:
        return f"sentence {self.sentence_id} {self.asked}: {self.label}"


class ArgueWork(models.Model):
    """What a person's ARGUE-style work on a topic is judged against: the bank, and whether every gold answer is
    asked of each sentence (by default only the answers whose documents the sentence cites)."""

    work = models.OneToOneField("assessor.AssessorWork", on_delete=models.CASCADE, related_name="+")
    bank = models.SlugField(max_length=100)
    check_all = models.BooleanField(default=False)
    negatives = models.BooleanField(default=False)  # uncited negative assertions asked (ARGUE's option)

    def __str__(self) -> str:
        return f"work {self.work_id} against {self.bank}{' (every answer)' if self.check_all else ''}"
