"""Report requests and what a report file said beyond its sentences and citations.

A request is a topic of the report family: the topic keeps its id and its query
(the request's title), and the request adds the fields a report is written
for. A report is a run's answer like any other (`assessor.Answer` with its
sentences and citations); `ReportLayout` keeps what the file said that the
answer does not, so that the export gives the file's layout back.
"""

from django.db import models

from assessor.models.keys import published_id
from assessor.models.scope import CampaignScopedManager


class LengthUnit(models.TextChoices):
    CHARACTERS = "characters", "characters (after NFKC)"
    WORDS = "words", "words"


class ReportRequest(models.Model):
    topic = models.OneToOneField("assessor.Topic", primary_key=True, on_delete=models.CASCADE, related_name="request")
    title = models.TextField()
    background = models.TextField(blank=True)
    problem_statement = models.TextField(blank=True)
    # The report's length limit, if the request sets one: `limit` counts characters, `word_limit` words.
    limit = models.PositiveIntegerField(null=True, blank=True)
    word_limit = models.PositiveIntegerField(null=True, blank=True)
    collection_ids = models.JSONField(default=list, blank=True)
    imported_from = models.ForeignKey("assessor.ImportBatch", on_delete=models.PROTECT, related_name="+")

    # Inside a campaign, the requests of its topics only (an export of one campaign writes none of another's).
    objects = CampaignScopedManager["ReportRequest"]("topic__campaign")

    class Meta:
        ordering = ["topic_id"]

    def __str__(self) -> str:
        return f"{published_id(self.topic_id)}: {self.title}"

    @property
    def length_limit(self) -> tuple[int, str] | None:
        """The limit a report is held to: characters where the request gives both."""
        if self.limit is not None:
            return self.limit, LengthUnit.CHARACTERS
        if self.word_limit is not None:
            return self.word_limit, LengthUnit.WORDS
        return None


class CitationShape(models.TextChoices):
    """The three ways a report file cites documents."""

    DOCIDS = "docids", "a list of document ids"
    CONFIDENCES = "confidences", "a map of document id to confidence"
    INDICES = "indices", "indices into the report's references"


class ReportLayout(models.Model):
    answer = models.OneToOneField("assessor.Answer", on_delete=models.CASCADE, related_name="report")
    team_id = models.CharField(max_length=200)
    shape = models.CharField(max_length=16, choices=CitationShape.choices)
    # "responses" (report tracks) or "answer" (the RAG track's key): the export writes the same.
    sentences_key = models.CharField(max_length=16, default="responses")
    # Whether the file listed `references` (the indices shape always does); the export lists them where it did.
    references_given = models.BooleanField(default=False)
    # The citations' confidences, one map per sentence, for the confidences shape (the answer keeps their order).
    confidences = models.JSONField(default=list, blank=True)
    # The file's other metadata fields, as given.
    metadata = models.JSONField(default=dict, blank=True)
    imported_from = models.ForeignKey("assessor.ImportBatch", on_delete=models.PROTECT, related_name="+")

    def __str__(self) -> str:
        return f"report {self.answer_id} ({self.shape})"


class ReportDocument(models.Model):
    """A document's text as a report file gave it (`documents`): the text its sentences were written from.

    Files of different runs may give one document id different texts; each report keeps its own. The
    collection's segment of that id takes the first text given where it had none.
    """

    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="report_documents")
    segment = models.ForeignKey("assessor.Segment", on_delete=models.PROTECT, related_name="+")
    text = models.TextField(blank=True)
    title = models.TextField(blank=True)
    url = models.TextField(blank=True)

    class Meta:
        ordering = ["answer_id", "segment_id"]
        constraints = [models.UniqueConstraint(fields=["answer", "segment"], name="one_text_per_report_and_document")]

    def __str__(self) -> str:
        return f"{self.segment_id} in report {self.answer_id}"
