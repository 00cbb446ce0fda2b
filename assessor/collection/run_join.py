"""Joining two runs into one: one team's run split in two by files that spell its id differently.

The answers of the run `merge` move onto the run `keep`; `merge`'s id becomes
an alias of `keep` (`RunAlias`), so later files naming it land on `keep`; the
emptied run is deleted. Labels hang on answers and their citations, never on
runs, so they follow the answers.

A run answers a topic once, so where both runs answer a topic one answer must go:

- **the same answer** (the same text modulo whitespace, sentences on at most one
  side, and no kind of row, labels included, on both sides): the two rows are one
  answer, imported twice (in TREC 2024, once from the nugget file and once from a
  support file): they are combined, every row of both kept, on the one with sentences;
- **two different answers**: the organizer chooses, topic by topic, which the run keeps
  (`choices`: topic -> the id of the run whose answer stays). The other is set aside in
  the join's history (`RunAlias.set_aside`): the answer and every row that hangs on it
  (sentences, citations, labels of any app), serialized, so that nothing is lost. Without
  a choice for each such topic the join is refused, naming them, and nothing changes.

Both runs are the campaign's (the one in effect). Topics are named, in the plan, the
choices and the result, as the campaign's files name them (`published_id`).
"""

import json
import re
from dataclasses import dataclass, field

from django.contrib.admin.utils import NestedObjects
from django.contrib.auth.models import User
from django.core import serializers
from django.db import DEFAULT_DB_ALIAS, transaction

from assessor.collection.runs import AmbiguousRun, campaign_runs, run_aliases, run_match
from assessor.models import Answer, KeptAnswerScore, Run, RunAlias
from assessor.models.keys import published_id, topic_key
from assessor.scoring.kept import scores_refresh

# Rows computed from the labels, not made by anyone: neither compared, moved nor kept in the history (a join
# deletes them with their answer and `scores_refresh` computes them again).
DERIVED = (KeptAnswerScore,)


class RunJoinRefused(ValueError):
    """The join cannot be made; the message says why (an unknown run, the same run, answers to choose between)."""


@dataclass(frozen=True)
class Conflict:
    """A topic both runs answer: the two answers, described for the organizer's choice."""

    topic: str  # as the campaign's files name it
    same: bool  # one answer imported twice: combined, no choice needed
    keep_answer: str  # a description: words, sentences, rows of labels
    merge_answer: str
    why_not_same: str = ""


@dataclass(frozen=True)
class JoinPlan:
    """What joining `merge` into `keep` moves, combines and sets aside (reads only)."""

    keep: str
    merge: str
    # The topics whose answers of `merge` move (one answer each: a run answers a topic once).
    topics: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    # Aliases that named `merge` and will name `keep`.
    repointed: list[str] = field(default_factory=list)

    @property
    def answers(self) -> int:
        return len(self.topics)

    @property
    def combined(self) -> list[str]:
        return [c.topic for c in self.conflicts if c.same]

    @property
    def to_choose(self) -> list[Conflict]:
        return [c for c in self.conflicts if not c.same]

    def refusal(self, choices: dict[str, str]) -> str:
        """Why the join cannot be made with these choices ("" when it can)."""
        unknown = sorted(set(choices) - {c.topic for c in self.to_choose})
        if unknown:
            return f"no choice is needed for topic(s) {', '.join(unknown)}: both runs do not answer it differently"
        wrong = sorted(topic for topic, run in choices.items() if run not in (self.keep, self.merge))
        if wrong:
            return f"the answer kept for topic(s) {', '.join(wrong)} must be {self.keep}'s or {self.merge}'s"
        missing = [c.topic for c in self.to_choose if c.topic not in choices]
        if missing:
            return (
                f"runs {self.keep} and {self.merge} both answer topic(s) {', '.join(missing)} with different "
                "answers: a run answers a topic once, so choose for each which answer the run keeps (the "
                "other is set aside in the join's history): --answer TOPIC=RUN on the command line, the "
                "choices on the run's join page"
            )
        return ""


@dataclass(frozen=True)
class JoinResult:
    keep: str
    merge: str
    topics: list[str]
    alias: str
    repointed: list[str]
    combined: list[str] = field(default_factory=list)
    # topic -> the run whose answer was set aside
    set_aside: dict[str, str] = field(default_factory=dict)

    @property
    def answers(self) -> int:
        return len(self.topics)

    def summary(self) -> str:
        moved = f"{self.answers} answer(s) moved" + (f" (topics {', '.join(self.topics)})" if self.topics else "")
        parts = [moved]
        if self.combined:
            parts.append(f"the same answer combined on {len(self.combined)} topic(s) ({', '.join(self.combined)})")
        if self.set_aside:
            aside = ", ".join(f"{topic}: {run}'s" for topic, run in sorted(self.set_aside.items()))
            parts.append(f"answers set aside in the history ({aside})")
        return f"Joined run {self.merge} into {self.keep}: {'; '.join(parts)}; {self.alias} is now an alias of {self.keep}."


def run_named(run_id: str) -> Run:
    """The campaign's stored run an id names (its id, an alias, or the team-prefix rule), or RunJoinRefused."""
    runs = {run.run_id: run for run in campaign_runs()}
    try:
        stored = run_match(run_id.strip(), runs, run_aliases())
    except AmbiguousRun as exc:
        raise RunJoinRefused(str(exc)) from None
    if stored is None:
        raise RunJoinRefused(f"no run {run_id!r}")
    return runs[stored]


def _rows_on(answer: Answer) -> dict[str, int]:
    """How many rows of each kind hang on the answer, its sentences and their citations (labels of any app)."""
    collector = NestedObjects(using=DEFAULT_DB_ALIAS)
    collector.collect([answer])
    return {
        str(model._meta.verbose_name_plural): len(rows)
        for model, rows in collector.data.items()
        if model is not Answer and model not in DERIVED and rows
    }


def _describe(answer: Answer, rows: dict[str, int]) -> str:
    held = ", ".join(f"{name}: {count}" for name, count in sorted(rows.items())) or "nothing else"
    return f"{answer.words} words; {held}"


def _normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _why_not_same(keep: Answer, merge: Answer, keep_rows: dict[str, int], merge_rows: dict[str, int]) -> str:
    """Why two answers of a topic are not one answer imported twice ("" when they are)."""
    if _normalized(keep.text) != _normalized(merge.text):
        return "their texts differ"
    both = sorted(kind for kind in keep_rows if merge_rows.get(kind))
    if both:
        return f"both have {', '.join(both)}"
    return ""


def _plan(keep: Run, merge: Run) -> JoinPlan:
    if keep.pk == merge.pk:
        raise RunJoinRefused(f"{keep.run_id} and {merge.run_id} name the same run")
    # By the topics' published ids: what the plan shows and the choices name.
    keep_answers = {published_id(answer.topic_id): answer for answer in Answer.objects.filter(run=keep)}
    merge_answers = {published_id(answer.topic_id): answer for answer in Answer.objects.filter(run=merge)}
    conflicts = []
    for topic in sorted(set(keep_answers) & set(merge_answers)):
        kept, merged = keep_answers[topic], merge_answers[topic]
        kept_rows, merged_rows = _rows_on(kept), _rows_on(merged)
        why = _why_not_same(kept, merged, kept_rows, merged_rows)
        conflicts.append(
            Conflict(
                topic=topic,
                same=not why,
                keep_answer=_describe(kept, kept_rows),
                merge_answer=_describe(merged, merged_rows),
                why_not_same=why,
            )
        )
    return JoinPlan(
        keep=keep.run_id,
        merge=merge.run_id,
        topics=sorted(set(merge_answers) - set(keep_answers)),
        conflicts=conflicts,
        repointed=sorted(RunAlias.objects.filter(run=merge).values_list("alias", flat=True)),
    )


def join_plan(*, keep: str, merge: str) -> JoinPlan:
    """What `runs_join` would do, for a confirmation step; reads only."""
    return _plan(run_named(keep), run_named(merge))


def _combine(kept: Answer, merged: Answer, keep_run: Run) -> None:
    """One answer imported twice: every row of both onto the one with sentences, which `keep_run` holds."""
    survivor, other = (merged, kept) if merged.sentences.exists() else (kept, merged)
    # Every row that points at the answer, whichever app's: `_why_not_same` made sure only one side has each kind.
    for relation in Answer._meta.related_objects:
        model = relation.related_model
        if relation.one_to_many and isinstance(model, type) and model not in DERIVED:
            model._default_manager.filter(**{relation.field.name: other}).update(**{relation.field.name: survivor})
    other.delete()
    if survivor.run_id != keep_run.pk:
        Answer.objects.filter(pk=survivor.pk).update(run=keep_run)


def _set_aside(answer: Answer, run_id: str) -> dict:
    """The answer and every row that hangs on it, serialized for the history, then deleted."""
    collector = NestedObjects(using=DEFAULT_DB_ALIAS)
    collector.collect([answer])
    rows = [row for model, instances in collector.data.items() if model not in DERIVED for row in instances]
    entry = {
        "topic": answer.topic_id,
        "run": run_id,
        "text": answer.text,
        # As JSON (dates and decimals as text), each row with its model and primary key, as `dumpdata` writes.
        "rows": json.loads(serializers.serialize("json", rows)),
    }
    answer.delete()
    return entry


@transaction.atomic
def runs_join(*, keep: str, merge: str, by: User | None, choices: dict[str, str] | None = None) -> JoinResult:
    """Move every answer of run `merge` onto run `keep`, keep `merge`'s id as an alias, delete `merge`.

    Where both runs answer a topic: the same answer is combined; for different answers `choices`
    (topic as published -> the run id whose answer stays) says which stays, the other is set aside in the history.
    Raises RunJoinRefused (and changes nothing) when a choice is missing or names neither run.
    """
    choices = {topic: run_named(run).run_id for topic, run in (choices or {}).items()}
    keep_run, merge_run = run_named(keep), run_named(merge)
    # Lock both rows, in one order, so that two joins of the same runs cannot interleave.
    list(Run.objects.select_for_update().filter(pk__in=[keep_run.pk, merge_run.pk]).order_by("pk"))
    plan = _plan(keep_run, merge_run)
    refusal = plan.refusal(choices)
    if refusal:
        raise RunJoinRefused(refusal)
    merge_id = merge_run.run_id
    topics = list(Answer.objects.filter(run=merge_run).values_list("topic_id", flat=True))
    set_aside: list[dict] = []
    campaign = keep_run.campaign
    for conflict in plan.conflicts:
        key = topic_key(conflict.topic, campaign)
        kept = Answer.objects.get(run=keep_run, topic_id=key)
        merged = Answer.objects.get(run=merge_run, topic_id=key)
        if conflict.same:
            _combine(kept, merged, keep_run)
        elif choices[conflict.topic] == keep_run.run_id:
            set_aside.append(_set_aside(merged, merge_id))
        else:
            set_aside.append(_set_aside(kept, keep_run.run_id))
    moved = Answer.objects.filter(run=merge_run).update(run=keep_run)
    # Aliases that named `merge` name `keep` now, so a chain of joins resolves in one step.
    RunAlias.objects.filter(run=merge_run).update(run=keep_run)
    # The run goes before its id becomes an alias: an alias never equals a stored run's id.
    merge_run.delete()
    RunAlias.objects.create(
        campaign_id=keep_run.campaign_id,
        alias=merge_id,
        run=keep_run,
        joined_from=merge_id,
        answers_moved=moved,
        created_by=by,
        set_aside=set_aside,
    )
    # The moved, combined and chosen answers' scores are `keep`'s now.
    scores_refresh(topics=topics)
    return JoinResult(
        keep=keep_run.run_id,
        merge=merge_id,
        topics=plan.topics,
        alias=merge_id,
        repointed=plan.repointed,
        combined=plan.combined,
        set_aside={published_id(entry["topic"]): entry["run"] for entry in set_aside},
    )
