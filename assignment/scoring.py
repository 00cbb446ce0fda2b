"""The nugget metrics of the protocol, as plain functions over plain data (no ORM).

Per answer, with s = 1 for support, 0.5 for partial_support, 0 otherwise and
ss = 1 for support only:

    A  = sum(s) / #nuggets                 Astrict = sum(ss) / #nuggets
    V  = sum(s over vital) / #vital        Vstrict = sum(ss over vital) / #vital
    W  = (sum(s over vital) + 0.5 sum(s over okay)) / (#vital + 0.5 #okay)
    Wstrict likewise with ss               L = the answer's length in words

The denominators count every nugget of the topic's set, labelled or not: a
nugget the answer has no label for adds 0 to the sums. An empty denominator
gives 0. A nugget without importance (an LLM draft) counts in A only.

A run's score is the mean over the condition's evaluated topics, where a topic
the run has no evaluated answer for counts as 0 and stays in the denominator.
See docs/scores.md.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from assessor.scoring.scores import NUGGET_METRICS, RunTopic, Scores, ratio, run_means

SUPPORT = "support"
PARTIAL_SUPPORT = "partial_support"
VITAL = "vital"
OKAY = "okay"

LABEL_SCORE = {SUPPORT: 1.0, PARTIAL_SUPPORT: 0.5}
STRICT_LABEL_SCORE = {SUPPORT: 1.0}
OKAY_WEIGHT = 0.5

# (importance, label) -> how many of an answer's nuggets have that importance and label.
LabelTally = Mapping[tuple[str, str], int]


@dataclass(frozen=True)
class NuggetCounts:
    """How many nuggets a topic's set holds, by importance (the metrics' denominators)."""

    vital: int = 0
    okay: int = 0
    unrated: int = 0  # no importance yet: counted by A only

    @property
    def total(self) -> int:
        return self.vital + self.okay + self.unrated

    @classmethod
    def of(cls, importances: Iterable[str]) -> "NuggetCounts":
        vital = okay = unrated = 0
        for importance in importances:
            if importance == VITAL:
                vital += 1
            elif importance == OKAY:
                okay += 1
            else:
                unrated += 1
        return cls(vital=vital, okay=okay, unrated=unrated)


def answer_metrics_from_tally(*, tally: LabelTally, counts: NuggetCounts, words: int) -> dict[str, float]:
    """The seven metrics of one answer from its label tally and its topic's nugget counts."""
    s = {VITAL: 0.0, OKAY: 0.0, "": 0.0}
    ss = {VITAL: 0.0, OKAY: 0.0, "": 0.0}
    for (importance, label), n in tally.items():
        key = importance if importance in (VITAL, OKAY) else ""
        s[key] += n * LABEL_SCORE.get(label, 0.0)
        ss[key] += n * STRICT_LABEL_SCORE.get(label, 0.0)
    weighted_count = counts.vital + OKAY_WEIGHT * counts.okay
    return {
        "A": ratio(s[VITAL] + s[OKAY] + s[""], counts.total),
        "Astrict": ratio(ss[VITAL] + ss[OKAY] + ss[""], counts.total),
        "V": ratio(s[VITAL], counts.vital),
        "Vstrict": ratio(ss[VITAL], counts.vital),
        "W": ratio(s[VITAL] + OKAY_WEIGHT * s[OKAY], weighted_count),
        "Wstrict": ratio(ss[VITAL] + OKAY_WEIGHT * ss[OKAY], weighted_count),
        "L": float(words),
    }


def answer_metrics(*, nuggets: Sequence[tuple[str, str | None]], words: int) -> dict[str, float]:
    """The metrics of one answer from its topic's nuggets as (importance, label or None if unlabelled)."""
    tally: dict[tuple[str, str], int] = defaultdict(int)
    for importance, label in nuggets:
        if label is not None:
            tally[importance, label] += 1
    counts = NuggetCounts.of(importance for importance, _ in nuggets)
    return answer_metrics_from_tally(tally=tally, counts=counts, words=words)


def condition_scores(
    *,
    tallies: Mapping[RunTopic, LabelTally],
    nugget_counts: Mapping[str, NuggetCounts],
    words: Mapping[RunTopic, int],
    topics: Iterable[str] | None = None,
    means: bool = True,
) -> Scores:
    """The scores of one condition (`means` False: its answers' rows only, as the kept scores read them).

    tallies: (run_id, topic_id) -> the answer's label tally, for every
    evaluated answer (one with at least one label; its tally may hold no
    support at all). The runs are those of the answers, and the topics
    evaluated those of the answers unless `topics` names them (when only some
    runs are asked for, the topics still come from the whole condition).
    nugget_counts: topic_id -> the counts of that topic's nugget set.
    words: (run_id, topic_id) -> the answer's length in words.
    """
    per_topic = {
        key: answer_metrics_from_tally(
            tally=tally, counts=nugget_counts.get(key[1], NuggetCounts()), words=words.get(key, 0)
        )
        for key, tally in sorted(tallies.items())
    }
    topic_list = sorted(set(topics) if topics is not None else {topic for _, topic in per_topic})
    runs = sorted({run for run, _ in per_topic})
    return Scores(
        metrics=NUGGET_METRICS,
        per_topic=per_topic,
        run_means=run_means(per_topic, runs=runs, topics=topic_list, metrics=NUGGET_METRICS) if means else {},
        topics=topic_list,
        runs=runs,
    )
