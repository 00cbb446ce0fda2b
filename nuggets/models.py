"""Nugget sets of a topic and their nuggets, with the lineage of post-edited ones.

A set holds fact nuggets (TREC 2024: short statements an answer must contain) or question
nuggets (the report family's banks: questions, optionally with gold answers). Both are edited
in the same workspace, with the same undo, lineage and lifecycle.
"""

from django.db import models

from assessor.models import Provenance
from assessor.models.scope import CampaignScopedManager


class NuggetSetManager(CampaignScopedManager["NuggetSet"]):
    """Inside a campaign, the sets of its topics (their sources are its). The path is the class's, so that the
    related managers Django derives from it (topic.nugget_sets) filter on it too."""

    def __init__(self) -> None:
        super().__init__("source__campaign")


class NuggetManager(CampaignScopedManager["Nugget"]):
    """Inside a campaign, the nuggets of its sets (a set's name says nothing of the campaign)."""

    def __init__(self) -> None:
        super().__init__("nugget_set__source__campaign")


class NuggetSet(Provenance):
    """The nuggets of one topic made one way; sets of one name across topics form a condition's nuggets."""

    class Kind(models.TextChoices):
        MANUAL = "manual", "ManualNuggets"
        AUTO_EDIT = "auto_edit", "AutoNuggets+Edits"
        AUTO = "auto", "AutoNuggets"
        DRAFT = "draft", "AutoNuggets drafts"

    class Status(models.TextChoices):
        OPEN = "open"
        SUBMITTED = "submitted"

    class Form(models.TextChoices):
        """What the set's nuggets are; the first family's conditions take fact nuggets only."""

        FACTS = "facts", "fact nuggets"
        QUESTIONS = "questions", "question nuggets"

    MAX_NUGGETS = 20
    MAX_DRAFTS = 30

    topic = models.ForeignKey("assessor.Topic", on_delete=models.PROTECT, related_name="nugget_sets")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # Defaults to the kind; distinguishes several sets of one kind (AutoNuggets from two models).
    name = models.SlugField(max_length=100)
    # The label source the name belongs to (assessor.models.sources): its kind and provenance.
    source = models.ForeignKey("assessor.LabelSource", on_delete=models.PROTECT, related_name="+")
    # For AutoNuggets+Edits: the LLM drafts the assessor started from.
    drafts = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="edited_sets")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.SUBMITTED)
    form = models.CharField(max_length=10, choices=Form.choices, default=Form.FACTS)
    # Optimistic concurrency for the editing workspace.
    version = models.PositiveIntegerField(default=0)

    # A set's name is its topic's: inside a campaign, the sets of that campaign's topics (their sources are its).
    objects = NuggetSetManager()

    class Meta:
        ordering = ["topic_id", "name"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "name"], name="one_nugget_set_per_topic_and_name"),
            Provenance.one_maker_constraint("nugget_set_has_one_maker"),
        ]

    def __str__(self) -> str:
        return f"{self.name} nuggets of {self.topic_id}"

    @property
    def kind_label(self) -> str:
        """What people read of the kind: a bank's kinds are named as banks, not as the TREC 2024 conditions."""
        if self.form == self.Form.QUESTIONS:
            return BANK_KIND_LABELS.get(self.kind, self.kind)
        return self.get_kind_display()


BANK_KIND_LABELS: dict[str, str] = {
    NuggetSet.Kind.MANUAL: "Question bank",
    NuggetSet.Kind.AUTO_EDIT: "Question bank, post-edited",
    NuggetSet.Kind.AUTO: "LLM question bank",
    NuggetSet.Kind.DRAFT: "LLM question bank drafts",
}


class Nugget(Provenance):
    class Importance(models.TextChoices):
        VITAL = "vital"
        OKAY = "okay"

    class Origin(models.TextChoices):
        """How a post-edited nugget came from the drafts."""

        KEPT = "kept"
        REWORDED = "reworded"
        MERGED = "merged"
        SPLIT = "split"
        ADDED = "added"

    class AnswerRule(models.TextChoices):
        """How a question's gold answers combine: any one of them, or all of them."""

        OR = "or", "OR (any answer)"
        AND = "and", "AND (all answers)"

    nugget_set = models.ForeignKey(NuggetSet, on_delete=models.CASCADE, related_name="nuggets")
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    # Blank for LLM drafts, which carry no importance until an assessor gives one.
    importance = models.CharField(max_length=5, choices=Importance.choices, blank=True)
    origin = models.CharField(max_length=10, choices=Origin.choices, blank=True)
    derived_from = models.ManyToManyField("self", symmetrical=False, blank=True, related_name="derivatives")
    source_segment = models.ForeignKey(
        "assessor.Segment", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Question nuggets with gold answers only: how the answers combine (blank: open-ended, or a fact).
    answer_rule = models.CharField(max_length=3, choices=AnswerRule.choices, blank=True)

    objects = NuggetManager()

    class Meta:
        ordering = ["nugget_set_id", "position"]
        constraints = [Provenance.one_maker_constraint("nugget_has_one_maker")]
        indexes = [models.Index(fields=["nugget_set", "position"])]

    def __str__(self) -> str:
        return self.text

    @property
    def words(self) -> int:
        return len(self.text.split())


class GoldAnswer(models.Model):
    """One gold answer of a question nugget, with the documents that support it.

    It is part of its question: made by whoever made the question (the nugget's provenance),
    copied with it when a post-edit keeps, rewords, merges or splits the question.
    """

    nugget = models.ForeignKey(Nugget, on_delete=models.CASCADE, related_name="gold_answers")
    position = models.PositiveSmallIntegerField()
    text = models.TextField()
    # Document ids, in the order given; ids the collection does not hold are kept as written.
    documents = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["nugget_id", "position"]
        constraints = [models.UniqueConstraint(fields=["nugget", "position"], name="one_gold_answer_per_position")]

    def __str__(self) -> str:
        return self.text


class NuggetEdit(models.Model):
    """The edit log of the nugget workspace: every operation with its before and after."""

    nugget_set = models.ForeignKey(NuggetSet, on_delete=models.CASCADE, related_name="edits")
    user = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    operation = models.CharField(max_length=20)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    set_version = models.PositiveIntegerField()
    undone = models.BooleanField(default=False)
    # The browser's id for the operation is kept with the work's operations (assessor.models.WorkOperation),
    # whose answer names this edit: a retried request is recognised there and not applied twice.

    class Meta:
        ordering = ["nugget_set_id", "at", "id"]
