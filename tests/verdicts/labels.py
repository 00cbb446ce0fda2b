"""A verdict source's scores (1 for yes, 0 for no; a run's mean over the source's topics), its file in and out, and
its leaderboard. Only counted verdicts are read (assessor.scoring.lifecycle): not those of open work or running jobs."""

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import render

from assessor.collection.pages import download_response, leaderboard_context, scores_download, scores_or_404
from assessor.http import AuthenticatedRequest
from assessor.importing.base import ImportFailure, read_jsonl, require
from assessor.importing.pipeline import Changes, RecordImport
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
from assessor.sources import import_source_claim
from assessor.work.roles import organizer_required
from tests.verdicts.models import (
    IMPORT_VERDICTS,
    LABEL_FAMILY,
    LABELS,
    SCORE_FAMILY,
    VERDICT_JOB,
    VERDICT_WORK,
    Verdict,
)


def counted(name: str):  # a source's counted verdicts
    return labels_counted(Verdict.objects.filter(source__family=LABEL_FAMILY, source__name=name))


def compute(
    *, columns: tuple[str, ...], topics: Sequence[str] | None = None, answers: Sequence[int] | None = None
) -> Scores:
    """The registry's `ScoreFamily.compute`; columns are (source name,). Raises LookupError for a source without any."""
    verdicts = counted(columns[0])
    every_topic = sorted(set(verdicts.values_list("answer__topic_id", flat=True)))
    if not every_topic:
        raise LookupError(f"no counted verdicts under {columns[0]!r}")
    verdicts = verdicts.filter(answer__topic_id__in=topics) if topics is not None else verdicts
    verdicts = verdicts.filter(answer_id__in=answers) if answers is not None else verdicts
    rows = verdicts.values_list("answer__run__run_id", "answer__topic_id", "label")
    per_topic = {(run, topic): {"yes": float(label == "yes")} for run, topic, label in rows}
    runs = sorted(set(Answer.objects.filter(topic_id__in=every_topic).values_list("run__run_id", flat=True)))
    evaluated = sorted(topics) if topics is not None else every_topic
    means = run_means(per_topic, runs=runs, topics=evaluated, metrics=("yes",))
    return Scores(metrics=("yes",), per_topic=per_topic, run_means=means, topics=evaluated, runs=runs)


def verdict_scores(*, name: str, runs: Sequence[str] | None = None, per_topic: bool = True) -> Scores:
    """As kept (assessor.scoring.kept), or from the labels when open work is counted."""
    if open_included():
        return compute(columns=(name,))
    return kept_scores(family=SCORE_FAMILY, columns=(name,), runs=runs, per_topic=per_topic)


def listed() -> list[tuple[str, ...]]:
    names = labels_counted(Verdict.objects.all()).order_by().values_list("source__name", flat=True).distinct()
    return [(name,) for name in sorted(set(names))]


def job_scope(job_id: int) -> dict[tuple[str, ...], set[str]]:
    scope: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for name, topic in Verdict.objects.filter(job_id=job_id).values_list("source__name", "answer__topic_id").distinct():
        scope[(name,)].add(topic)
    return scope


def work_scope(work: AssessorWork) -> list[tuple[str, ...]]:
    return [(work.source.name,)] if work.kind == VERDICT_WORK and work.source is not None else []


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


Line = tuple[int, dict[str, Any]]  # (line number, {"run_id": ..., "topic_id": ..., "verdict": "yes" | "no"})


class VerdictsImport(RecordImport[Line, int, Verdict, Any]):
    """The registry's `Importer.function`, through the one pipeline: a line a verdict, keyed by its answer."""

    kind = IMPORT_VERDICTS
    chunk_size = None  # the whole file resolves at once

    def __init__(self, *, name: str, **common: Any) -> None:
        super().__init__(**common)
        self.name = name

    def options(self) -> dict[str, Any]:
        return {"name": self.name, "replace": self.replace}

    def parse(self) -> Iterator[Line]:
        for number, row in read_jsonl(self.path):
            for field in ("run_id", "topic_id", "verdict"):
                require(row, field, str, path=self.path, line=number)
            if row["verdict"] not in LABELS:
                raise ImportFailure("must be yes or no", path=self.path, line=number, field="verdict")
            yield number, row

    def chunk_prepare(self, chunk: list[Line]) -> None:
        self.source_id = import_source_claim(
            writes=self.writes, family=LABEL_FAMILY, name=self.name, user=self.user, path=self.path, option="name"
        )
        answers = Answer.objects.filter(run__run_id__in={row["run_id"] for _, row in chunk})
        self.answers = {(run, topic): pk for pk, run, topic in answers.values_list("pk", "run__run_id", "topic_id")}
        self.stored = {verdict.answer_id: verdict for verdict in Verdict.objects.filter(source_id=self.source_id)}
        self.topics = {row["topic_id"] for _, row in chunk}

    def resolve(self, line: Line) -> int:
        if (answer_id := self.answers.get((line[1]["run_id"], line[1]["topic_id"]))) is None:
            raise ImportFailure("no answer of this run to this topic", path=self.path, line=line[0], field="run_id")
        return answer_id

    def repeated(self, first: Line, line: Line, *, first_new: bool) -> None:
        raise ImportFailure(f"answer repeated (first on line {first[0]})", path=self.path, line=line[0], field="run_id")

    def same(self, stored: Verdict, line: Line) -> bool:
        return stored.label == line[1]["verdict"]

    def replaceable(self, stored: Verdict) -> bool:
        return stored.imported_from_id is not None

    def conflict(self, stored: Verdict, line: Line) -> ImportFailure:
        message = f"{self.name!r} holds {stored.label!r} for this answer; import with replace to change it"
        return ImportFailure(message, path=self.path, line=line[0], field="verdict")

    def write(self, changes: Changes[int, Line, Verdict]) -> None:
        for stored, (_, row) in changes.changed.values():
            stored.label, stored.imported_from = row["verdict"], self.batch
        self.writes.update(changes.changed_rows(), ["label", "imported_from"])
        new = changes.new.items()
        self.writes.create(
            Verdict(answer_id=a, source_id=self.source_id, imported_from=self.batch, label=line[1]["verdict"])
            for a, line in new
        )
        self.writes.scores_touch(family=SCORE_FAMILY, columns=(self.name,), topics=self.topics)  # ScoreRefresh.TOUCHED


def verdict_lines(*, name: str) -> Iterator[str]:
    """The counted verdicts of a source as JSONL, with who or what made each."""
    for verdict in (
        counted(name).select_related("answer__run", "created_by").order_by("answer__run__run_id", "answer__topic_id")
    ):
        row = {"run_id": verdict.answer.run.run_id, "topic_id": verdict.answer.topic_id, "verdict": verdict.label}
        yield json.dumps({**row, "made_by": verdict.made_by}) + "\n"


@organizer_required
def leaderboard(request: AuthenticatedRequest) -> HttpResponse:
    names = [name for (name,) in listed()]
    name = request.GET.get("source") or (names[0] if names else "")
    about = "Run means of the share of answers judged to answer their question (a missing answer counts 0)."
    context: dict = {"names": names, "name": name, "title": "Verdict leaderboard", "about": about}
    if name:
        scores = scores_or_404(lambda: verdict_scores(name=name, per_topic=False))
        context.update(leaderboard_context(request, scores=scores, default_sort="yes", base_query={"source": name}))
    return render(request, "collection/source_leaderboard.html", context)


@organizer_required
def download_verdicts(request: AuthenticatedRequest, name: str) -> StreamingHttpResponse:
    scores_or_404(lambda: verdict_scores(name=name, per_topic=False))  # a 404 for a source without verdicts
    return download_response(verdict_lines(name=name), f"verdicts.{name}.jsonl")


@organizer_required
def download_scores(request: AuthenticatedRequest, name: str) -> HttpResponse | StreamingHttpResponse:
    return scores_download(request, lambda: verdict_scores(name=name), f"verdict_scores.{name}")
