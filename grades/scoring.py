"""A grade source's scores: each report's maxgrade, avggrade, coverT and coveredT on its topic's bank
(grades.measures), and a run's mean over every request of the family (`family_requests`): a request without
a bank, one the source did not grade, or one without the run's report counts 0, as autojudge-base's leaderboard
computes the `all` row with `on_missing="fix_aggregate"` over the campaign's requests.

Only counted grades are read (assessor.scoring.lifecycle: not those of open work or of a job still running)
of questions in counted banks (nuggets.selectors.nugget_sets_counted_q). A topic's N is the size of the bank
its graded questions belong to, so a question nobody graded counts 0 for every report. A grade given with the
report's documents (`document_grade` set) counts as the report's grade times the document's, on 0-25.

The kept scores (assessor.scoring.kept) keep a source's rows and each run's sums, and divide by the topics the
source has rows on; `grade_scores` divides the same sums by the family's requests instead, so that the kept
figures and those computed from the labels are the same numbers.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

from django.db.models import Count

from assessor.models import Answer, AssessorWork, LabelSource
from assessor.registry import Crosstab
from assessor.scoring.exact import mean_of_sum
from assessor.scoring.kept import kept_run_sums, kept_scores
from assessor.scoring.lifecycle import (
    job_sentences,
    jobs_not_final_by,
    labels_counted,
    open_included,
    open_work_by,
    open_work_sentences,
)
from assessor.scoring.scores import Scores, run_means
from grades.kinds import GRADE_WORK, GRADES, GRADES_FAMILY
from grades.measures import METRICS, report_measures
from grades.models import GradeLabel
from nuggets.models import Nugget
from nuggets.selectors import nugget_sets_counted_q
from reports.models import ReportRequest

SCORE_FAMILY = "grades"
# A source that graded reports with their documents (grades.llm) grades a question 0-25: the report's grade
# times its best document's, covered at T x 5.
COMBINED_SCALE = 5


def family_requests(graded: Iterable[str]) -> list[str]:
    """The requests a grade source's run means are taken over: every report request (`import_requests`) and
    every topic the source graded (a TREC 2024 topic graded on a bank is a request whose title is its query).
    The first family's topics that nobody graded are not the family's requests, and are left out."""
    return sorted(set(ReportRequest.objects.values_list("topic_id", flat=True)) | set(graded))


def graded_with_documents(name: str) -> bool:
    """Whether the source graded reports with their documents (its questions graded 0-25)."""
    labels = GradeLabel.objects.filter(source__family=GRADES_FAMILY, source__name=name)
    return labels.filter(document_grade__isnull=False).exists()


def grades_counted(name: str):
    labels = GradeLabel.objects.filter(source__family=GRADES_FAMILY, source__name=name)
    return labels_counted(labels).filter(nugget_sets_counted_q("nugget__nugget_set__"))


def grade_scores_from_labels(
    *, name: str, topics: Sequence[str] | None = None, answers: Sequence[int] | None = None
) -> Scores:
    """Raises LookupError when the source has no counted grade."""
    labels = grades_counted(name)
    banks = dict(labels.order_by().values_list("nugget__nugget_set_id", "topic_id").distinct())
    every_topic = sorted(set(banks.values()))
    if not every_topic:
        raise LookupError(f"no counted grades under {name!r}")
    bank_size: Counter[str] = Counter()
    for set_id, size in (
        Nugget.objects.filter(nugget_set_id__in=list(banks)).order_by().values("nugget_set_id").annotate(n=Count("pk"))
    ).values_list("nugget_set_id", "n"):
        bank_size[banks[set_id]] += size
    scope = set(family_requests(every_topic))
    if topics is not None:
        scope &= set(topics)
    if answers is not None:
        scope &= set(Answer.objects.filter(pk__in=answers).values_list("topic_id", flat=True))
    scoped = labels.filter(topic_id__in=scope)
    if answers is not None:
        scoped = scoped.filter(answer_id__in=list(answers))
    grades: dict[tuple[str, str], list[int]] = defaultdict(list)
    scale = 1
    rows = scoped.order_by().values_list("answer__run__run_id", "topic_id", "label", "document_grade")
    for run_id, topic_id, grade, document_grade in rows:
        if document_grade is not None:  # graded with its documents: a 0-25 grade
            grade, scale = grade * document_grade, COMBINED_SCALE
        grades[(run_id, topic_id)].append(grade)
    per_topic = {key: report_measures(given, bank_size[key[1]], scale=scale) for key, given in grades.items()}
    evaluated = sorted(scope)
    runs = sorted(set(Answer.objects.filter(topic_id__in=every_topic).values_list("run__run_id", flat=True)))
    return Scores(
        metrics=METRICS,
        per_topic=per_topic,
        run_means=run_means(per_topic, runs=runs, topics=evaluated, metrics=METRICS),
        topics=evaluated,
        runs=runs,
    )


def grade_scores(*, name: str, runs: Sequence[str] | None = None, per_topic: bool = True) -> Scores:
    """As kept (assessor.scoring.kept), or from the labels when open work is counted; either way a run's mean is
    over every request of the family."""
    if open_included():
        return grade_scores_from_labels(name=name)
    kept = kept_scores(family=SCORE_FAMILY, columns=(name,), runs=runs, per_topic=per_topic)
    return _kept_over_requests(kept, name=name)


def _kept_over_requests(kept: Scores, *, name: str) -> Scores:
    """Kept scores whose run means are over every request of the family: each run's kept sum (an exact sum of
    its rows, as `run_means` adds them) divided by the number of requests, not by the topics with rows."""
    requests = family_requests(kept.topics)
    if requests == kept.topics:
        return kept
    sums = kept_run_sums(family=SCORE_FAMILY, columns=(name,))
    means = {
        run: {metric: mean_of_sum(sums[run][metric], len(requests)) for metric in kept.metrics} for run in kept.runs
    }
    return replace(kept, topics=requests, run_means=means)


def compute(*, columns: tuple[str, ...], topics: Sequence[str] | None, answers: Sequence[int] | None) -> Scores:
    """The registry's `ScoreFamily.compute`: columns are (grade source name,)."""
    (name,) = columns
    return grade_scores_from_labels(name=name, topics=topics, answers=answers)


def listed() -> list[tuple[str, ...]]:
    labels = labels_counted(GradeLabel.objects.filter(source__family=GRADES_FAMILY))
    labels = labels.filter(nugget_sets_counted_q("nugget__nugget_set__"))
    return [(name,) for name in sorted(set(labels.order_by().values_list("source__name", flat=True)))]


def job_scope(job_id: int) -> dict[tuple[str, ...], set[str]]:
    scope: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for name, topic in GradeLabel.objects.filter(job_id=job_id).values_list("source__name", "topic_id").distinct():
        scope[(name,)].add(topic)
    return scope


def work_scope(work: AssessorWork) -> list[tuple[str, ...]]:
    """A grading work's source; for the work that makes a topic's bank (a person's question list), every source
    with grades on that bank: its submit or reopening makes them count or not."""
    if work.kind == GRADE_WORK:
        return [(work.source.name,)] if work.source is not None else []
    if not work.nugget_set_name:
        return []
    graded = GradeLabel.objects.filter(
        nugget__nugget_set__topic_id=work.topic_id, nugget__nugget_set__name=work.nugget_set_name
    )
    return [(name,) for name in sorted(set(graded.values_list("source__name", flat=True)))]


def notes(sources: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], list[str]]:
    """What keeps each source's scores from being final: open work, running or partial jobs, and the questions an
    LLM source is stale on (three queries)."""
    names = sorted({name for (name,) in sources})
    open_work = open_work_by(AssessorWork.objects.filter(kind=GRADE_WORK, source__name__in=names), "source__name")
    jobs = jobs_not_final_by(kind=GRADES, names=names)
    stale = dict(
        LabelSource.objects.filter(family=GRADES_FAMILY, name__in=names, kind=LabelSource.Kind.LLM)
        .exclude(stale={})
        .values_list("name", "stale")
    )
    return {
        (name,): open_work_sentences(open_work.get((name,), []), what=f"Grades into {name!r}")
        + job_sentences(jobs.get(name, []))
        + stale_sentences(name, stale.get(name, {}))
        for (name,) in sources
    }


def stale_sentences(name: str, stale: dict[str, dict[str, list[int]]]) -> list[str]:
    """The note of an LLM source stale on changed questions ({bank: {topic: [question ids]}}): until they are graded
    again they count 0 for every report (as an ungraded question does), so its scores are not the model's."""
    topics = sorted({topic for banks in stale.values() for topic in banks})
    if not topics:
        return []
    questions = sum(len(ids) for banks in stale.values() for ids in banks.values())
    shown = ", ".join(topics[:5]) + (", ..." if len(topics) > 5 else "")
    return [
        f"Stale: {questions} question(s) of the banks of {len(topics)} topic(s) ({shown}) changed since {name!r} "
        "graded them; they count 0 for every report until the changed items are graded again."
    ]


AGREEMENT_LABELS = ("0", "1", "2", "3", "4", "5")


def _item_grades(name: str) -> dict[tuple[int, int], str]:
    """A source's counted grades keyed by (report, question)."""
    rows = grades_counted(name).order_by().values_list("answer_id", "nugget_id", "label")
    return {(answer, nugget): str(grade) for answer, nugget, grade in rows}


def crosstab(columns_a: tuple[str, ...], columns_b: tuple[str, ...]) -> Crosstab:
    """The registry's `ScoreFamily.crosstab`: two sources' grades of the (report, question) both graded."""
    (name_a,), (name_b,) = columns_a, columns_b
    a, b = _item_grades(name_a), _item_grades(name_b)
    counts = Counter((grade, b[item]) for item, grade in a.items() if item in b)
    return Crosstab(labels=AGREEMENT_LABELS, counts=dict(counts), total_a=len(a), total_b=len(b))
