"""A preference source's run ranking: each report's Borda count (wins - losses) on its topic, as PrefNugget
aggregates preferences (`borda.standings`), and its share of the decided comparisons it won.

Only counted preferences are read (assessor.scoring.lifecycle): not those of open work or of a job still
running. A report's count depends on its topic's other preferences too, so a scope of some answers is
computed over their whole topics (the foundation keeps the rows of the answers in scope).
"""

from collections import Counter, defaultdict
from collections.abc import Sequence

from assessor.models import Answer, AssessorWork
from assessor.registry import Crosstab
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
from preferences.borda import flipped, standings
from preferences.kinds import PREFERENCE_WORK, PREFERENCES, PREFERENCES_FAMILY
from preferences.models import PreferenceLabel

SCORE_FAMILY = "preferences"
METRICS = ("borda", "win_frac")


def borda_scores_from_labels(
    *, name: str, topics: Sequence[str] | None = None, answers: Sequence[int] | None = None
) -> Scores:
    """Raises LookupError when the source has no counted preference."""
    labels = labels_counted(PreferenceLabel.objects.filter(source__family=PREFERENCES_FAMILY, source__name=name))
    every_topic = sorted(set(labels.order_by().values_list("topic_id", flat=True)))
    if not every_topic:
        raise LookupError(f"no counted preferences under {name!r}")
    scope = set(every_topic)
    if topics is not None:
        scope &= set(topics)
    if answers is not None:
        scope &= set(Answer.objects.filter(pk__in=answers).values_list("topic_id", flat=True))
    rows = labels.filter(topic_id__in=scope).values_list(
        "topic_id", "first__run__run_id", "second__run__run_id", "label"
    )
    compared: set[tuple[str, str]] = set()
    given = []
    for topic_id, first, second, label in rows.order_by("topic_id", "first__run__run_id", "second__run__run_id"):
        compared.update({(first, topic_id), (second, topic_id)})
        given.append((topic_id, first, second, label))
    table = standings(given)
    per_topic: dict[tuple[str, str], dict[str, float]] = {}
    for run_id, topic_id in compared:
        standing = table.get((topic_id, run_id))
        decided = standing.wins + standing.losses if standing else 0
        borda = standing.borda if standing else 0
        per_topic[(run_id, topic_id)] = {"borda": float(borda), "win_frac": borda / decided if decided else 0.0}
    evaluated = sorted(scope) if topics is not None or answers is not None else every_topic
    runs = sorted(set(Answer.objects.filter(topic_id__in=every_topic).values_list("run__run_id", flat=True)))
    return Scores(
        metrics=METRICS,
        per_topic=per_topic,
        run_means=run_means(per_topic, runs=runs, topics=evaluated, metrics=METRICS),
        topics=evaluated,
        runs=runs,
    )


def borda_scores(*, name: str, runs: Sequence[str] | None = None, per_topic: bool = True) -> Scores:
    """As kept (assessor.scoring.kept), or from the labels when open work is counted."""
    if open_included():
        return borda_scores_from_labels(name=name)
    return kept_scores(family=SCORE_FAMILY, columns=(name,), runs=runs, per_topic=per_topic)


def compute(*, columns: tuple[str, ...], topics: Sequence[str] | None, answers: Sequence[int] | None) -> Scores:
    """The registry's `ScoreFamily.compute`: columns are (preference source name,)."""
    (name,) = columns
    return borda_scores_from_labels(name=name, topics=topics, answers=answers)


def listed() -> list[tuple[str, ...]]:
    labels = labels_counted(PreferenceLabel.objects.filter(source__family=PREFERENCES_FAMILY))
    return [(name,) for name in sorted(set(labels.order_by().values_list("source__name", flat=True)))]


def job_scope(job_id: int) -> dict[tuple[str, ...], set[str]]:
    scope: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for name, topic in PreferenceLabel.objects.filter(job_id=job_id).values_list("source__name", "topic_id").distinct():
        scope[(name,)].add(topic)
    return scope


def work_scope(work: AssessorWork) -> list[tuple[str, ...]]:
    if work.kind == PREFERENCE_WORK and work.source is not None:
        return [(work.source.name,)]
    return []


def notes(sources: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], list[str]]:
    """What keeps each source's scores from being final: open work and running or partial jobs (two queries)."""
    names = sorted({name for (name,) in sources})
    open_work = open_work_by(AssessorWork.objects.filter(kind=PREFERENCE_WORK, source__name__in=names), "source__name")
    jobs = jobs_not_final_by(kind=PREFERENCES, names=names)
    return {
        (name,): open_work_sentences(open_work.get((name,), []), what=f"Preferences into {name!r}")
        + job_sentences(jobs.get(name, []))
        for (name,) in sources
    }


# The labels' ordinal order for agreement: the first report better, a tie, the second better.
AGREEMENT_LABELS = ("1", "0", "2")


def _pair_labels(name: str) -> dict[tuple[int, int], str]:
    """A source's counted preferences (ties included, unreadable answers left out), keyed by the pair in
    answer id order, as if the lower id had been shown first."""
    labels = labels_counted(
        PreferenceLabel.objects.filter(source__family=PREFERENCES_FAMILY, source__name=name, label__isnull=False)
    )
    keyed = {}
    for first, second, label in labels.order_by().values_list("first_id", "second_id", "label"):
        keyed[(first, second) if first < second else (second, first)] = str(label if first < second else flipped(label))
    return keyed


def crosstab(columns_a: tuple[str, ...], columns_b: tuple[str, ...]) -> Crosstab:
    """The registry's `ScoreFamily.crosstab`: two sources' preferences of the pairs both judged, the pair
    turned round where one showed it the other way."""
    (name_a,), (name_b,) = columns_a, columns_b
    a, b = _pair_labels(name_a), _pair_labels(name_b)
    counts = Counter((label, b[pair]) for pair, label in a.items() if pair in b)
    return Crosstab(labels=AGREEMENT_LABELS, counts=dict(counts), total_a=len(a), total_b=len(b))
