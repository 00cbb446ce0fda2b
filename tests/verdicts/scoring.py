"""The scores of a verdict source: per answer, 1 for yes and 0 for no; a run's mean over the source's topics.

Only counted verdicts are read (assessor.scoring.lifecycle): not those of open
work or of a job still running.
"""

from collections import defaultdict
from collections.abc import Sequence

from assessor.models import Answer, AssessorWork
from assessor.scoring.kept import kept_scores
from assessor.scoring.lifecycle import (
    job_sentences,
    jobs_not_final_by,
    labels_counted,
    open_included,
    open_work_by,
    open_work_sentences,
)
from assessor.scoring.scores import Scores, run_means
from tests.verdicts.kinds import LABEL_FAMILY, SCORE_FAMILY, VERDICT_JOB, VERDICT_WORK
from tests.verdicts.models import Verdict

METRICS = ("yes",)


def verdict_scores_from_labels(
    *, name: str, topics: Sequence[str] | None = None, answers: Sequence[int] | None = None
) -> Scores:
    """Raises LookupError when the source has no counted verdict."""
    verdicts = labels_counted(Verdict.objects.filter(source__name=name, source__family=LABEL_FAMILY))
    every_topic = sorted(set(verdicts.values_list("answer__topic_id", flat=True)))
    if not every_topic:
        raise LookupError(f"no counted verdicts under {name!r}")
    if topics is not None:
        verdicts = verdicts.filter(answer__topic_id__in=topics)
    if answers is not None:
        verdicts = verdicts.filter(answer_id__in=answers)
    per_topic = {
        (run_id, topic_id): {"yes": 1.0 if label == "yes" else 0.0}
        for run_id, topic_id, label in verdicts.values_list("answer__run__run_id", "answer__topic_id", "label")
    }
    runs = sorted(set(Answer.objects.filter(topic_id__in=every_topic).values_list("run__run_id", flat=True)))
    evaluated = sorted(topics) if topics is not None else every_topic
    return Scores(
        metrics=METRICS,
        per_topic=per_topic,
        run_means=run_means(per_topic, runs=runs, topics=evaluated, metrics=METRICS),
        topics=evaluated,
        runs=runs,
    )


def verdict_scores(*, name: str, runs: Sequence[str] | None = None, per_topic: bool = True) -> Scores:
    """As kept (assessor.scoring.kept), or from the labels when open work is counted."""
    if open_included():
        return verdict_scores_from_labels(name=name)
    return kept_scores(family=SCORE_FAMILY, columns=(name,), runs=runs, per_topic=per_topic)


def compute(*, columns: tuple[str, ...], topics: Sequence[str] | None, answers: Sequence[int] | None) -> Scores:
    """The registry's `ScoreFamily.compute`: columns are (source name,)."""
    (name,) = columns
    return verdict_scores_from_labels(name=name, topics=topics, answers=answers)


def listed() -> list[tuple[str, ...]]:
    names = labels_counted(Verdict.objects.all()).order_by().values_list("source__name", flat=True).distinct()
    return [(name,) for name in sorted(set(names))]


def job_scope(job_id: int) -> dict[tuple[str, ...], set[str]]:
    scope: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for name, topic in Verdict.objects.filter(job_id=job_id).values_list("source__name", "answer__topic_id").distinct():
        scope[(name,)].add(topic)
    return scope


def work_scope(work: AssessorWork) -> list[tuple[str, ...]]:
    if work.kind == VERDICT_WORK and work.source is not None:
        return [(work.source.name,)]
    return []


def notes(sources: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], list[str]]:
    """What keeps each source's scores from being final: open work and running or partial jobs (two queries)."""
    names = sorted({name for (name,) in sources})
    open_work = open_work_by(AssessorWork.objects.filter(kind=VERDICT_WORK, source__name__in=names), "source__name")
    jobs = jobs_not_final_by(kind=VERDICT_JOB, names=names)
    return {
        (name,): open_work_sentences(open_work.get((name,), []), what=f"Verdicts into {name!r}")
        + job_sentences(jobs.get(name, []))
        for (name,) in sources
    }
