"""Joining two runs into one: one team's run split in two by files that spell its id differently.

The answers of the run `merge` move onto the run `keep`; `merge`'s id becomes
an alias of `keep` (`RunAlias`), so later files naming it land on `keep`; the
emptied run is deleted. Labels hang on answers and their citations, never on
runs, so they follow the answers. A run answers a topic once, so two runs that
both answer a topic are not joined: the join is refused, naming the topics,
and nothing changes.
"""

from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction

from assessor.collection.runs import AmbiguousRun, run_aliases, run_match
from assessor.models import Answer, Run, RunAlias
from assessor.scoring.kept import scores_refresh


class RunJoinRefused(ValueError):
    """The join cannot be made; the message says why (an unknown run, the same run, topics in conflict)."""


@dataclass(frozen=True)
class JoinPlan:
    """What joining `merge` into `keep` moves, or the topics both runs answer (then nothing may move)."""

    keep: str
    merge: str
    # The topics whose answers of `merge` move (one answer each: a run answers a topic once).
    topics: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    # Aliases that named `merge` and will name `keep`.
    repointed: list[str] = field(default_factory=list)

    @property
    def answers(self) -> int:
        return len(self.topics)

    @property
    def refusal(self) -> str:
        return (
            f"runs {self.keep} and {self.merge} both answer topic(s) {', '.join(self.conflicts)}: "
            "a run answers a topic once, so they cannot be joined"
        )


@dataclass(frozen=True)
class JoinResult:
    keep: str
    merge: str
    topics: list[str]
    alias: str
    repointed: list[str]

    @property
    def answers(self) -> int:
        return len(self.topics)

    def summary(self) -> str:
        moved = f"{self.answers} answer(s) moved" + (f" (topics {', '.join(self.topics)})" if self.topics else "")
        return f"Joined run {self.merge} into {self.keep}: {moved}; {self.alias} is now an alias of {self.keep}."


def run_named(run_id: str) -> Run:
    """The stored run an id names (its id, an alias, or the team-prefix rule), or RunJoinRefused."""
    runs = {run.run_id: run for run in Run.objects.all()}
    try:
        stored = run_match(run_id.strip(), runs, run_aliases())
    except AmbiguousRun as exc:
        raise RunJoinRefused(str(exc)) from None
    if stored is None:
        raise RunJoinRefused(f"no run {run_id!r}")
    return runs[stored]


def _plan(keep: Run, merge: Run) -> JoinPlan:
    if keep.pk == merge.pk:
        raise RunJoinRefused(f"{keep.run_id} and {merge.run_id} name the same run")
    keep_topics = set(Answer.objects.filter(run=keep).values_list("topic_id", flat=True))
    merge_topics = sorted(Answer.objects.filter(run=merge).values_list("topic_id", flat=True))
    return JoinPlan(
        keep=keep.run_id,
        merge=merge.run_id,
        topics=[topic for topic in merge_topics if topic not in keep_topics],
        conflicts=[topic for topic in merge_topics if topic in keep_topics],
        repointed=sorted(RunAlias.objects.filter(run=merge).values_list("alias", flat=True)),
    )


def join_plan(*, keep: str, merge: str) -> JoinPlan:
    """What `runs_join` would do, for a confirmation step; reads only."""
    return _plan(run_named(keep), run_named(merge))


@transaction.atomic
def runs_join(*, keep: str, merge: str, by: User | None) -> JoinResult:
    """Move every answer of run `merge` onto run `keep`, keep `merge`'s id as an alias, delete `merge`.

    Raises RunJoinRefused (and changes nothing) when the runs both answer a topic.
    """
    keep_run, merge_run = run_named(keep), run_named(merge)
    # Lock both rows, in one order, so that two joins of the same runs cannot interleave.
    list(Run.objects.select_for_update().filter(pk__in=[keep_run.pk, merge_run.pk]).order_by("pk"))
    plan = _plan(keep_run, merge_run)
    if plan.conflicts:
        raise RunJoinRefused(plan.refusal)
    merge_id = merge_run.run_id
    topics = list(Answer.objects.filter(run=merge_run).values_list("topic_id", flat=True))
    moved = Answer.objects.filter(run=merge_run).update(run=keep_run)
    # Aliases that named `merge` name `keep` now, so a chain of joins resolves in one step.
    RunAlias.objects.filter(run=merge_run).update(run=keep_run)
    # The run goes before its id becomes an alias: an alias never equals a stored run's id.
    merge_run.delete()
    RunAlias.objects.create(alias=merge_id, run=keep_run, joined_from=merge_id, answers_moved=moved, created_by=by)
    # The moved answers' scores are `keep`'s now.
    scores_refresh(topics=topics)
    return JoinResult(
        keep=keep_run.run_id, merge=merge_id, topics=plan.topics, alias=merge_id, repointed=plan.repointed
    )
