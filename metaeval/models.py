"""Score tables imported from elsewhere, to compare with the conditions computed here, and disagreement studies."""

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.utils import timezone

from assessor.models.scope import CampaignScopedManager, campaign_default
from assessor.registry import registry

if TYPE_CHECKING:
    from assessor.models import Campaign


def campaign_field() -> "models.ForeignKey[Campaign, Campaign]":
    """The campaign that owns a row: its names are unique within it (made inside the campaign in effect)."""
    return models.ForeignKey("assessor.Campaign", on_delete=models.PROTECT, default=campaign_default, related_name="+")


class ScoreTable(models.Model):
    campaign = campaign_field()
    name = models.SlugField(max_length=100)
    imported_from = models.ForeignKey("assessor.ImportBatch", null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    objects = CampaignScopedManager["ScoreTable"]()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="one_score_table_name_per_campaign")]

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


class Study(models.Model):
    """A disagreement study (support paper, Section 5): items two sources disagree on, judged again.

    `sample` is reproducible from the two sources' labels, `k` and `seed`
    (metaeval.studies). The independent assessor's labels go into the people's
    source `judge`, in one work per topic restricted to the sampled items; an
    LLM may judge the same items into the source named `llm_name`.
    """

    campaign = campaign_field()
    name = models.SlugField(max_length=100)
    # The label family of both sources: one that takes part in studies (metaeval.studies.study_families).
    family = models.CharField(max_length=32)
    source_a = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    source_b = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    # What both sources labelled against, where the family has one: a nugget list, a question bank.
    nugget_set_name = models.CharField(max_length=100, blank=True)
    k = models.PositiveIntegerField(default=15)
    seed = models.BigIntegerField()
    # {"<topic id>": [items, in the order shown]}: first-citation ids, [answer id, nugget id] pairs, or the
    # family's lists (assessor.registry.study_item_stored).
    sample = models.JSONField(default=dict)
    judge = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    assessor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # The LLM that judges the same items with the same prompt, if one was asked: its output name and job.
    llm_name = models.SlugField(max_length=100, blank=True)
    llm_job = models.ForeignKey("assessor.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)

    objects = CampaignScopedManager["Study"]()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"
        constraints = [models.UniqueConstraint(fields=["campaign", "name"], name="one_study_name_per_campaign")]

    def __str__(self) -> str:
        return f"study {self.name} ({self.source_a.name} vs {self.source_b.name})"

    @property
    def compares(self) -> str:
        """What the study compares, in words ("support labels"); a family no app offers any more, as stored."""
        judging = registry.study_judging(self.family)
        return judging.compares if judging else f"{self.family} (unknown)"

    @property
    def nugget_set_words(self) -> str:
        """What `nugget_set_name` names in the family: "nugget list", "question bank"."""
        judging = registry.study_judging(self.family)
        return judging.nugget_set if judging and judging.nugget_set else "nugget list"

    @property
    def items_total(self) -> int:
        return sum(len(items) for items in self.sample.values())


class KeptComparison(models.Model):
    """A meta-evaluation page as computed (seconds at TREC scale), shown in milliseconds (metaeval.comparison_page).

    Kept under the stamps its two sources had when its computation began (assessor's KeptSource.stamp, made
    anew by every refresh): a row whose stamps are no longer its sources' is stale, shown as such while a
    worker computes it again; a row without a page is a large comparison asked for and not yet computed.
    In the database, so that every web process and worker machine shares it. Its sources are named as in its
    campaign (two campaigns may both have "auto_edit/manual"): the key hashes the campaign with the query
    (metaeval.comparison_page.kept_query), and a worker computes it inside its campaign.
    """

    campaign = campaign_field()
    key = models.CharField(max_length=64, unique=True)  # sha256 of the query (and of the campaign, past the first)
    # The page's parameters ({"a", "b", "metric", options}): what a worker computes it again from.
    query = models.JSONField()
    # The sources' stamps the page was computed under; empty while a comparison asked for was never computed.
    stamp_a = models.CharField(max_length=32, blank=True)
    stamp_b = models.CharField(max_length=32, blank=True)
    # The pickled ComparisonPage without its plots, written by this code only; null until first computed.
    page = models.BinaryField(null=True)
    plots = models.BinaryField(null=True)  # the pickled (metric, points of both plots): read by the images only
    # The pickled metaeval.comparison_cells.Cells: what the figures are made of, so that a change to a source is
    # applied to them rather than computed again; null where the sources' scores are not kept rows.
    cells = models.BinaryField(null=True)
    # What the worker's computation found wrong with the query (a metric neither source has...), under the stamps.
    error = models.TextField(blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)  # how long the computation took
    # The latest view (to the hour): the comparisons viewed lately are brought up to date when a source changes.
    viewed_at = models.DateTimeField()
    queued_at = models.DateTimeField(null=True, blank=True)  # when a view asked a worker to compute it

    objects = CampaignScopedManager["KeptComparison"]()

    def __str__(self) -> str:
        return f"{self.query.get('a')} against {self.query.get('b')}"
