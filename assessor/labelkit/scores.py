"""The default scoring of an app on the answer-label kit: a source a leaderboard, a label its value, a run's mean over
the source's topics (a missing answer counts 0). Only counted labels are read (assessor.scoring.lifecycle): not those
of open work or running jobs."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from assessor.labelkit.spec import AnswerLabels
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

Columns = tuple[str, ...]  # (source name,)


@dataclass(frozen=True)
class AnswerScores:
    """The registry's `ScoreFamily` functions of an `AnswerLabels`."""

    spec: AnswerLabels

    def counted(self, name: str) -> QuerySet[Any]:
        labels = self.spec.model._default_manager.filter(source__family=self.spec.name, source__name=name)
        return labels_counted(labels)

    def compute(
        self, *, columns: Columns, topics: Sequence[str] | None = None, answers: Sequence[int] | None = None
    ) -> Scores:
        """`ScoreFamily.compute`. Raises LookupError for a source without any counted label."""
        labels = self.counted(columns[0])
        every_topic = sorted(set(labels.values_list("answer__topic_id", flat=True)))
        if not every_topic:
            raise LookupError(f"no counted {self.spec.noun}s under {columns[0]!r}")
        labels = labels.filter(answer__topic_id__in=topics) if topics is not None else labels
        labels = labels.filter(answer_id__in=answers) if answers is not None else labels
        metric, values = self.spec.metric, self.spec.values
        rows = labels.values_list("answer__run__run_id", "answer__topic_id", "label")
        per_topic = {(run, topic): {metric: values[label]} for run, topic, label in rows}
        runs = sorted(set(Answer.objects.filter(topic_id__in=every_topic).values_list("run__run_id", flat=True)))
        evaluated = sorted(topics) if topics is not None else every_topic
        means = run_means(per_topic, runs=runs, topics=evaluated, metrics=(metric,))
        return Scores(metrics=(metric,), per_topic=per_topic, run_means=means, topics=evaluated, runs=runs)

    def scores(self, *, name: str, runs: Sequence[str] | None = None, per_topic: bool = True) -> Scores:
        """As kept (assessor.scoring.kept), or from the labels when open work is counted."""
        if open_included():
            return self.compute(columns=(name,))
        return kept_scores(family=self.spec.name, columns=(name,), runs=runs, per_topic=per_topic)

    def listed(self) -> list[Columns]:
        labels = labels_counted(self.spec.model._default_manager.filter(source__family=self.spec.name))
        return [(name,) for name in sorted(set(labels.order_by().values_list("source__name", flat=True)))]

    def job_scope(self, job_id: int) -> dict[Columns, set[str]]:
        scope: dict[Columns, set[str]] = defaultdict(set)
        labels = self.spec.model._default_manager.filter(job_id=job_id)
        for name, topic in labels.values_list("source__name", "answer__topic_id").distinct():
            scope[(name,)].add(topic)
        return scope

    def work_scope(self, work: Any) -> list[Columns]:
        return [(work.source.name,)] if work.kind == self.spec.work_kind and work.source is not None else []

    def notes(self, sources: Sequence[Columns]) -> dict[Columns, list[str]]:
        """What keeps each source's scores from being final: open work and running or partial jobs (two queries)."""
        names = sorted({name for (name,) in sources})
        works = AssessorWork.objects.filter(kind=self.spec.work_kind, source__name__in=names)
        open_work = open_work_by(works, "source__name")
        jobs = jobs_not_final_by(kind=self.spec.job_kind, names=names)
        what = f"{self.spec.noun.capitalize()}s into"
        return {
            (name,): open_work_sentences(open_work.get((name,), []), what=f"{what} {name!r}")
            + job_sentences(jobs.get(name, []))
            for (name,) in sources
        }
