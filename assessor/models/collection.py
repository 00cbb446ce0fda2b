"""The evaluation collection: topics, segments, qrels, runs and their answers."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from assessor.models.keys import published_id
from assessor.models.scope import CampaignScopedManager, campaign_default


class Topic(models.Model):
    # The stored key: the id as the campaign's files give it, made unique across campaigns
    # (assessor.models.keys); `published_id` is what files and pages show.
    id = models.CharField(primary_key=True, max_length=64)
    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="topics"
    )
    query = models.TextField()
    imported_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    objects = CampaignScopedManager["Topic"]()

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.published_id

    @property
    def published_id(self) -> str:
        return published_id(self.id)


class Segment(models.Model):
    """A passage of the corpus.

    A judged or cited segment whose text the collection does not have is kept
    with empty text: it is still a valid id for qrels and citations.
    """

    docid = models.CharField(primary_key=True, max_length=200)
    text = models.TextField(blank=True)
    title = models.TextField(blank=True)
    url = models.TextField(blank=True)
    imported_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["docid"]

    def __str__(self) -> str:
        return self.docid

    @property
    def document_id(self) -> str:
        return self.docid.split("#", 1)[0]

    @property
    def has_text(self) -> bool:
        return bool(self.text)


class QrelSource(models.Model):
    """A named set of relevance grades: `nist` (people), `umbrela` (an LLM judge), or any name."""

    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="+"
    )
    name = models.SlugField(max_length=100)
    source = models.OneToOneField("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    imported_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    job = models.ForeignKey("assessor.Job", null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    objects = CampaignScopedManager["QrelSource"]()

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="one_qrel_source_name_per_campaign")]

    def __str__(self) -> str:
        return self.name


class Qrel(models.Model):
    class Grade(models.IntegerChoices):
        IRRELEVANT = 0, "irrelevant"
        RELATED = 1, "related"
        HIGHLY_RELEVANT = 2, "highly relevant"
        PERFECTLY_RELEVANT = 3, "perfectly relevant"

    RELEVANT_MIN_GRADE = 1

    source = models.ForeignKey(QrelSource, on_delete=models.CASCADE, related_name="qrels")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="qrels")
    segment = models.ForeignKey(Segment, on_delete=models.PROTECT, related_name="qrels")
    grade = models.PositiveSmallIntegerField(choices=Grade.choices)
    # For LLM grades: the job that made it (people's grades come from files).
    job = models.ForeignKey("assessor.Job", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    imported_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "topic", "segment"], name="qrel_once_per_source"),
            models.CheckConstraint(condition=models.Q(grade__lte=3), name="qrel_grade_0_to_3"),
        ]
        indexes = [models.Index(fields=["topic", "source", "grade"])]

    def __str__(self) -> str:
        return f"{published_id(self.topic_id)} {self.segment_id} {self.grade} ({self.source})"


class Run(models.Model):
    """A system's answers, one per topic.

    Run ids are matched across files by `assessor.collection.runs`: an id
    matches a stored one that equals it, an alias of it (`RunAlias`), or one
    that differs only by a team prefix (`citi.BEST_cot_gpt3.5` ~ `BEST_cot_gpt3.5`).
    """

    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="runs"
    )
    run_id = models.CharField(max_length=200)
    # The id with its team prefix (`citi.BEST_cot_gpt3.5`) when a file named the run so; exports may write it.
    published_id = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    imported_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    objects = CampaignScopedManager["Run"]()

    class Meta:
        ordering = ["run_id"]
        constraints = [models.UniqueConstraint(fields=["campaign", "run_id"], name="one_run_id_per_campaign")]

    def __str__(self) -> str:
        return self.run_id


class RunAlias(models.Model):
    """Another id that names a run: the id of a run joined into it (`assessor.collection.run_join`).

    Imports resolve an alias to its run, so a file naming the old id lands on
    the joined run. An alias never equals a stored run's id (the join checks it).
    """

    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="+"
    )
    alias = models.CharField(max_length=200)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="aliases")
    # The id of the run whose answers a join moved into `run` (that run is deleted, so kept as text).
    joined_from = models.CharField(max_length=200, blank=True, default="")
    answers_moved = models.PositiveIntegerField(default=0)
    # The answers the join set aside where both runs answered a topic differently (the organizer chose the
    # other): per answer its topic, run, text and every row that hung on it, as `dumpdata` writes them.
    set_aside = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = CampaignScopedManager["RunAlias"]()

    class Meta:
        ordering = ["alias"]
        verbose_name_plural = "run aliases"
        constraints = [models.UniqueConstraint(fields=["campaign", "alias"], name="one_alias_per_campaign")]

    def __str__(self) -> str:
        return f"{self.alias} -> {self.run}"


class Answer(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="answers")
    topic = models.ForeignKey(Topic, on_delete=models.PROTECT, related_name="answers")
    # The sentences joined by single spaces (or the file's answer_text where
    # no sentence split is known).
    text = models.TextField()
    # L of the protocol: whitespace words of `text`.
    words = models.PositiveIntegerField()
    imported_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["topic_id", "run_id"]
        constraints = [models.UniqueConstraint(fields=["run", "topic"], name="one_answer_per_run_and_topic")]

    def __str__(self) -> str:
        return f"{self.run} / {published_id(self.topic_id)}"


class AnswerReference(models.Model):
    """The answer's ordered reference list; citations index into it."""

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="references")
    rank = models.PositiveSmallIntegerField()  # 0-based, as citation indexes are
    segment = models.ForeignKey(Segment, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["answer_id", "rank"]
        constraints = [models.UniqueConstraint(fields=["answer", "rank"], name="one_reference_per_rank")]


class Sentence(models.Model):
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="sentences")
    index = models.PositiveSmallIntegerField()  # 0-based position in the answer
    text = models.TextField()

    class Meta:
        ordering = ["answer_id", "index"]
        constraints = [models.UniqueConstraint(fields=["answer", "index"], name="one_sentence_per_index")]

    def __str__(self) -> str:
        return self.text[:80]


class Citation(models.Model):
    """A sentence's citation of a segment; position 0 is the one the metrics judge."""

    sentence = models.ForeignKey(Sentence, on_delete=models.CASCADE, related_name="citations")
    position = models.PositiveSmallIntegerField()  # order within the sentence
    segment = models.ForeignKey(Segment, on_delete=models.PROTECT, related_name="+")
    # Index into the answer's reference list, where the file gave one.
    reference_rank = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["sentence_id", "position"]
        constraints = [models.UniqueConstraint(fields=["sentence", "position"], name="one_citation_per_position")]

    @property
    def is_first(self) -> bool:
        return self.position == 0
