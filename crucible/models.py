"""What a Crucible job keeps beside the run it makes: the chunks it read, every extraction with its
confidence, and the run's provenance.

The run itself is a run like any other (`assessor.Run`, stored through the report importer), so every
score family, page and export treats it as an imported one; `CrucibleRun` says which job made it, from
which bank, with which endpoint, model, prompt version and variant.
"""

from django.db import models

from assessor.models.scope import CampaignScopedManager


class Variant(models.TextChoices):
    ABSTRACTIVE = "abstractive", "abstractive (the condensed sentence)"
    EXTRACTIVE = "extractive", "extractive (the supporting text as is)"


class CrucibleRun(models.Model):
    job = models.OneToOneField("assessor.Job", on_delete=models.CASCADE, related_name="+")
    run_name = models.CharField(max_length=200)  # the id of the run the job makes (the job's output name)
    bank = models.CharField(max_length=200)
    variant = models.CharField(max_length=16, choices=Variant.choices)
    per_question = models.PositiveSmallIntegerField()  # k: 1 for a short report, 5 for a long one
    # Set once the run is made: the run, and the report import it was stored through.
    run = models.ForeignKey("assessor.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    made_from = models.ForeignKey(
        "assessor.ImportBatch", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Why the run was not made (an endpoint without log-probabilities, a refused import).
    error = models.TextField(blank=True)

    # Inside a campaign, the Crucible runs of its jobs only.
    objects = CampaignScopedManager["CrucibleRun"]("job__campaign")

    class Meta:
        ordering = ["-job_id"]

    def __str__(self) -> str:
        return f"{self.run_name} (job {self.job_id})"


class Chunk(models.Model):
    """About 1,000 characters of a retrieved document, whole sentences, in its topic's retrieval order."""

    job = models.ForeignKey("assessor.Job", on_delete=models.CASCADE, related_name="+")
    topic = models.ForeignKey("assessor.Topic", on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveIntegerField()
    segment = models.ForeignKey("assessor.Segment", on_delete=models.CASCADE, related_name="+")
    text = models.TextField()

    class Meta:
        ordering = ["job_id", "topic_id", "rank"]
        constraints = [models.UniqueConstraint(fields=["job", "topic", "rank"], name="crucible_chunk_once")]


class Extraction(models.Model):
    """One (question, chunk) answer: the supporting text, its condensed sentence and their confidence."""

    job = models.ForeignKey("assessor.Job", on_delete=models.CASCADE, related_name="+")
    chunk = models.ForeignKey(Chunk, on_delete=models.CASCADE, related_name="+")
    question = models.PositiveSmallIntegerField()  # its position in the topic's bank
    extracted_text = models.TextField(blank=True)
    condensed_sentence = models.TextField(blank=True)
    # The mean token probability over the extracted text; None: the answer's tokens did not cover it.
    confidence = models.FloatField(null=True, blank=True)
    no_answer = models.BooleanField(default=False)
    # The answer cache's key: a re-run finds the confidence of a cached answer here (the cache keeps text only).
    cache_key = models.CharField(max_length=64, db_index=True)
    error = models.TextField(blank=True)  # an answer that could not be used after the re-asks

    class Meta:
        ordering = ["job_id", "chunk_id", "question"]


class KnownConfidence(models.Model):
    """The confidence of an answer the cache keeps (by its key), written as soon as the answer comes: the cache
    keeps the text only, and a re-run, or an item retried after failing midway, reads its confidence here."""

    cache_key = models.CharField(max_length=64, unique=True)
    confidence = models.FloatField()
