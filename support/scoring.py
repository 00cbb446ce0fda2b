"""Weighted support precision and recall, as plain functions over plain data (no ORM).

Each sentence of an answer is scored on its FIRST citation (position 0) only:
FS (2) = 1, PS (1) = 0.5, NS (0) = 0.

    weighted precision = sum of scores / #sentences that cite something and were judged
    weighted recall    = sum of scores / #sentences

A sentence with no citation is NS: it counts in recall's denominator only. A
first citation marked unjudged (-1), or with no label of the method, removes
its sentence from both denominators. An empty denominator gives 0. Run means
are over the method's evaluated topics, a missing answer counting 0
(assessor.scoring.scores.run_means). See docs/scores.md.
"""

import math
from collections.abc import Iterable, Mapping, Sequence

from assessor.scoring.scores import SUPPORT_METRICS, RunTopic, Scores, ratio, run_means

UNJUDGED = -1
SUPPORT_SCORE = {2: 1.0, 1: 0.5, 0: 0.0}

# A sentence as the metrics see it: None when it cites nothing, else the label
# of its first citation (-1 when unjudged or not labelled by the method).
SentenceLabel = int | None


def answer_support_metrics(sentences: Iterable[SentenceLabel]) -> dict[str, float]:
    """Weighted precision and recall of one answer from its sentences' first-citation labels."""
    scores: list[float] = []
    judged_citing = 0
    counted = 0
    for label in sentences:
        if label is None:
            counted += 1
            continue
        if label not in SUPPORT_SCORE:
            # Unjudged: the sentence is in neither denominator.
            continue
        scores.append(SUPPORT_SCORE[label])
        judged_citing += 1
        counted += 1
    total = math.fsum(scores)
    return {"weighted_precision": ratio(total, judged_citing), "weighted_recall": ratio(total, counted)}


def method_scores(
    *, answers: Mapping[RunTopic, Sequence[SentenceLabel]], topics: Iterable[str] | None = None
) -> Scores:
    """The scores of one support method over its evaluated answers.

    answers: (run_id, topic_id) -> the answer's sentences in order (see SentenceLabel).
    The topics evaluated are those of the answers unless `topics` names them.
    """
    per_topic = {key: answer_support_metrics(sentences) for key, sentences in sorted(answers.items())}
    topic_list = sorted(set(topics) if topics is not None else {topic for _, topic in per_topic})
    runs = sorted({run for run, _ in per_topic})
    return Scores(
        metrics=SUPPORT_METRICS,
        per_topic=per_topic,
        run_means=run_means(per_topic, runs=runs, topics=topic_list, metrics=SUPPORT_METRICS),
        topics=topic_list,
        runs=runs,
    )
