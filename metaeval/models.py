"""Score tables imported from elsewhere, to compare with the conditions computed here."""

from django.db import models
from django.utils import timezone


class ScoreTable(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    imported_from = models.ForeignKey("assessor.ImportBatch", null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.name


class ImportedScore(models.Model):
    """A row of an `export_scores` TSV; `topic_id` is `all` for a run mean.

    Run and topic are kept as text: a table may name runs this collection lacks.
    """

    table = models.ForeignKey(ScoreTable, on_delete=models.CASCADE, related_name="scores")
    run_id = models.CharField(max_length=200)
    topic_id = models.CharField(max_length=64)
    metric = models.CharField(max_length=40)
    value = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "run_id", "topic_id", "metric"], name="one_score_per_cell")
        ]
