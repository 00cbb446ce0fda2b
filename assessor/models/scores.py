"""Kept scores: every score source's per-answer and per-run figures, stored and kept up to date.

The figures are the finished work's (assessor.scoring.lifecycle.labels_counted):
each write to what a score reads (labels, nugget lists, the lifecycle of work
and jobs, imports, run joins, deletions) refreshes, inside its own transaction,
the kept rows of what it touched (assessor.scoring.kept). The pages
read these rows instead of recomputing a whole condition from its labels.
"""

from django.db import models

from assessor.models.scope import CampaignScopedManager, campaign_default

# The family of a source whose answers' rows are written while its job still runs, ahead of the job's end
# (assessor.scoring.written_ahead): no score family has the name, and no page lists it. The end gives the source its
# own family and name, in the transaction that makes the job's labels count.
WRITTEN_AHEAD = "~written-ahead"


class KeptSourceManager(CampaignScopedManager["KeptSource"]):
    """The kept sources of the campaign in effect: those that have scores (`KeptSource.objects`), or those whose rows
    are written ahead of their job's end (`KeptSource.written_ahead`), never one for the other."""

    def __init__(self, *, written_ahead: bool = False) -> None:
        super().__init__()
        self.written_ahead = written_ahead

    def get_queryset(self) -> models.QuerySet["KeptSource"]:
        sources = super().get_queryset()
        if self.written_ahead:
            return sources.filter(family=WRITTEN_AHEAD)
        return sources.exclude(family=WRITTEN_AHEAD)


class KeptSource(models.Model):
    """A condition or method with kept scores: the list of sources the pages show, with its evaluated topics."""

    # A campaign's conditions are its own: "auto_edit/manual" in two campaigns are two sources of kept scores.
    campaign = models.ForeignKey(
        "assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="+"
    )
    family = models.CharField(max_length=40)  # a registered ScoreFamily's name: "conditions", "methods"
    name = models.CharField(max_length=300)  # its columns joined by "/": "auto_edit/manual", "scratch"
    metrics = models.JSONField(default=list)
    # The topics with at least one evaluated answer: a run's mean is over all of them.
    topics = models.JSONField(default=list)
    # Made anew by every refresh of the source: what is derived from its figures and labels
    # (a meta-evaluation comparison) is kept under it and known stale once it changes.
    stamp = models.CharField(max_length=32, default="", blank=True)

    objects = KeptSourceManager()
    written_ahead = KeptSourceManager(written_ahead=True)

    class Meta:
        ordering = ["family", "name"]
        constraints = [models.UniqueConstraint(fields=["campaign", "family", "name"], name="kept_source_once")]

    def __str__(self) -> str:
        return f"{self.family} {self.name}"


class KeptAnswerScore(models.Model):
    """One evaluated answer's metrics under one source."""

    source = models.ForeignKey(KeptSource, on_delete=models.CASCADE, related_name="answers")
    answer = models.ForeignKey("assessor.Answer", on_delete=models.CASCADE, related_name="+")
    # The answer's run and topic, copied so that a run's rows are read without a join.
    run = models.ForeignKey("assessor.Run", on_delete=models.CASCADE, related_name="+")
    topic = models.ForeignKey("assessor.Topic", on_delete=models.CASCADE, related_name="+")
    values = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "answer"], name="kept_answer_once")]
        indexes = [
            models.Index(fields=["source", "run"], name="kept_answer_source_run"),
            models.Index(fields=["source", "topic"], name="kept_answer_source_topic"),
        ]


class KeptRunScore(models.Model):
    """One run's sums over its evaluated answers under one source; its mean divides by the source's topics."""

    source = models.ForeignKey(KeptSource, on_delete=models.CASCADE, related_name="runs")
    run = models.ForeignKey("assessor.Run", on_delete=models.CASCADE, related_name="+")
    sums = models.JSONField()
    # metric -> the exact sum of its values' fractions as text ("7/9", assessor.scoring.exact), so that a
    # refresh adds and takes away the answers it rewrites instead of reading the run's every answer, and a
    # mean is rounded once; `sums` holds the same sums rounded, for people reading the table.
    exact_sums = models.JSONField(default=dict)
    answered = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "run"], name="kept_run_once")]
