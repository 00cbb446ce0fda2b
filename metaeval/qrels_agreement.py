"""Agreement of two qrels sources (say NIST and UMBRELA), per topic and on average.

On each topic, over the segments both sources graded: precision, recall and F1
of the second source's relevant set against the first's (relevant = grade >=
`threshold`), Jaccard of the two relevant sets, and Cohen's kappa and
Krippendorff's alpha (ordinal) of the grades. The mean row averages each figure
over the topics where it is defined (macro); the pooled row computes it once
over every shared judgment (micro).
"""

import math
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from assessor.models import Qrel, QrelSource
from assessor.models.keys import published_id
from assessor.scoring.lifecycle import open_included, unfinished_job_ids
from metaeval.agreement import alpha_nominal, alpha_ordinal, kappa_weighted
from metaeval.stats import nan_as_none

NAN = float("nan")
FIGURES = ("precision", "recall", "f1", "jaccard", "kappa", "alpha_ordinal", "alpha_nominal")

Grades = Mapping[tuple[str, str], int]  # (topic, docid) -> grade


@dataclass(frozen=True)
class TopicAgreement:
    topic: str
    shared: int  # segments both sources graded
    relevant_a: int  # of those, relevant in a
    relevant_b: int
    relevant_both: int
    precision: float
    recall: float
    f1: float
    jaccard: float
    kappa: float
    alpha_ordinal: float
    alpha_nominal: float

    def figure(self, name: str) -> float:
        return getattr(self, name)


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else NAN


def _agreement(topic: str, pairs: list[tuple[int, int]], threshold: int, grades: list[int]) -> TopicAgreement:
    relevant_a = sum(1 for a, _ in pairs if a >= threshold)
    relevant_b = sum(1 for _, b in pairs if b >= threshold)
    both = sum(1 for a, b in pairs if a >= threshold and b >= threshold)
    precision, recall = _ratio(both, relevant_b), _ratio(both, relevant_a)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else (NAN if math.isnan(precision + recall) else 0.0)
    index = {grade: i for i, grade in enumerate(grades)}
    table = np.zeros((len(grades), len(grades)), dtype=np.int64)
    for a, b in pairs:
        table[index[a], index[b]] += 1
    return TopicAgreement(
        topic=topic,
        shared=len(pairs),
        relevant_a=relevant_a,
        relevant_b=relevant_b,
        relevant_both=both,
        precision=precision,
        recall=recall,
        f1=f1,
        jaccard=_ratio(both, relevant_a + relevant_b - both),
        kappa=kappa_weighted(table, weights="none"),
        alpha_ordinal=alpha_ordinal(table),
        alpha_nominal=alpha_nominal(table),
    )


@dataclass(frozen=True)
class QrelsAgreement:
    a: str
    b: str
    threshold: int
    topics: list[TopicAgreement]
    mean: dict[str, float]  # each figure averaged over the topics where it is defined
    pooled: TopicAgreement  # each figure over every shared judgment at once
    only_in_a: int  # judgments only a made
    only_in_b: int


def qrels_agreement_compute(a: Grades, b: Grades, *, threshold: int = 1, names: tuple[str, str] = ("a", "b")) -> QrelsAgreement:
    """The agreement of two sets of grades on the (topic, segment) pairs both graded."""
    by_topic: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for key, grade in a.items():
        other = b.get(key)
        if other is not None:
            by_topic[key[0]].append((grade, other))
    grades = sorted(set(a.values()) | set(b.values())) or [0]
    grades = list(range(min(grades), max(grades) + 1))
    # Each topic named as its campaign's files name it (the grades are keyed by the topics' stored keys).
    topics = [_agreement(published_id(topic), pairs, threshold, grades) for topic, pairs in sorted(by_topic.items())]
    mean = {}
    for name in FIGURES:
        values = [row.figure(name) for row in topics if not math.isnan(row.figure(name))]
        mean[name] = sum(values) / len(values) if values else NAN
    everything = [pair for pairs in by_topic.values() for pair in pairs]
    shared = len(everything)
    return QrelsAgreement(
        a=names[0],
        b=names[1],
        threshold=threshold,
        topics=topics,
        mean=mean,
        pooled=_agreement("all", everything, threshold, grades),
        only_in_a=len(a) - shared,
        only_in_b=len(b) - shared,
    )


class QrelsSourceError(LookupError):
    pass


def qrels_grades(name: str) -> dict[tuple[str, str], int]:
    # The campaign in effect's source of that name: another campaign may have one named alike.
    source = QrelSource.objects.filter(name=name).first()
    if source is None:
        known = ", ".join(QrelSource.objects.values_list("name", flat=True)) or "none yet"
        raise QrelsSourceError(f"no qrels source named {name!r}; qrels sources: {known}")
    # Grades of a job still running are provisional, like labels (assessor.scoring.lifecycle).
    qrels = Qrel.objects.filter(source=source)
    if not open_included():
        qrels = qrels.exclude(job_id__in=unfinished_job_ids())
    rows = qrels.values_list("topic_id", "segment_id", "grade")
    return {(topic, docid): grade for topic, docid, grade in rows.iterator(chunk_size=20_000)}


def qrels_sources_list() -> list[str]:
    return list(QrelSource.objects.order_by("name").values_list("name", flat=True))


def qrels_agreement_build(a: str, b: str, *, threshold: int = 1) -> QrelsAgreement:
    return qrels_agreement_compute(qrels_grades(a), qrels_grades(b), threshold=threshold, names=(a, b))



def _row_json(row: TopicAgreement) -> dict:
    return {
        "topic": row.topic,
        "shared": row.shared,
        "relevant_a": row.relevant_a,
        "relevant_b": row.relevant_b,
        "relevant_both": row.relevant_both,
        **{name: nan_as_none(row.figure(name)) for name in FIGURES},
    }


def qrels_agreement_json(result: QrelsAgreement) -> dict:
    return {
        "a": result.a,
        "b": result.b,
        "threshold": result.threshold,
        "topics": [_row_json(row) for row in result.topics],
        "mean": {name: nan_as_none(value) for name, value in result.mean.items()},
        "pooled": _row_json(result.pooled),
        "only_in_a": result.only_in_a,
        "only_in_b": result.only_in_b,
    }
