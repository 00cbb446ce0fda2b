"""A table of per-answer scores, the shape every score source shares.

Nugget conditions, support methods and imported score tables all produce a
`Scores`: the official exports write it, the leaderboard shows it, and the
meta-evaluation compares two of them. `Scores` itself is defined in the lowest
layer (`assessor.contracts`), where the registry's contracts can name it.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from assessor.contracts import Scores
from assessor.scoring.exact import exact_mean

NUGGET_METRICS = ("A", "Astrict", "V", "Vstrict", "W", "Wstrict", "L")
SUPPORT_METRICS = ("weighted_precision", "weighted_recall")
ALL_TOPICS = "all"
# Up to this many ids go in an IN list of a scoring read (below SQLite's conservative 999 parameters);
# beyond, the read takes the wider path.
IN_LIST_LIMIT = 900
# A scoring read of at most this many topics reaches their labels through the topics' own items (citations);
# wider, reading the source's labels whole is faster (measured at TREC scale, docs/pages.md).
NARROW_TOPICS = 50

RunTopic = tuple[str, str]  # (run id, topic id)


# --- the helpers every score shares ------------------------------------------------------


def ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, and 0 for an empty denominator."""
    return numerator / denominator if denominator else 0.0


def run_means(
    per_topic: Mapping[RunTopic, Mapping[str, float]],
    *,
    runs: Iterable[str],
    topics: Sequence[str],
    metrics: Sequence[str],
) -> dict[str, dict[str, float]]:
    """Each run's mean over `topics`, the mean of its scores' exact fractions rounded once (assessor.scoring.exact:
    means that are one number tie); a topic without a score for the run counts as 0."""
    means: dict[str, dict[str, float]] = {}
    for run in runs:
        rows = [per_topic.get((run, topic)) for topic in topics]
        means[run] = {
            metric: exact_mean((row[metric] for row in rows if row is not None), len(topics)) for metric in metrics
        }
    return means


# --- the one ranking rule ------------------------------------------------------------------


def ranked_run_ids(
    run_means: Mapping[str, Mapping[str, float]], *, metric: str | None, descending: bool = True
) -> list[str]:
    """The runs ordered by their mean of `metric` (by run id when None); ties are in run-id order."""
    run_ids = sorted(run_means)
    if metric is None:
        return run_ids[::-1] if descending else run_ids
    sign = -1.0 if descending else 1.0
    return sorted(run_ids, key=lambda run: (sign * run_means[run].get(metric, 0.0), run))


def shared_ranks(values: Sequence[float]) -> list[int]:
    """The ranks of values already in ranking order: equal neighbours share a rank (1, 1, 3)."""
    ranks: list[int] = []
    for position, value in enumerate(values, start=1):
        ranks.append(ranks[-1] if ranks and values[position - 2] == value else position)
    return ranks


@dataclass(frozen=True)
class RunRow:
    """One line of a leaderboard."""

    rank: int
    run_id: str
    means: dict[str, float]
    answered: int  # topics with an evaluated answer of this run


def runs_ranked(scores: Scores, *, metric: str, descending: bool = True) -> list[RunRow]:
    """The runs by their mean of `metric` (best first by default); ties share a rank, ordered by run id."""
    if metric not in scores.metrics:
        raise LookupError(f"unknown metric {metric!r}; expected one of {', '.join(scores.metrics)}")
    answered: dict[str, int] = defaultdict(int)
    for run, _ in scores.per_topic:
        answered[run] += 1
    ordered = ranked_run_ids(scores.run_means, metric=metric, descending=descending)
    ranks = shared_ranks([scores.run_means[run][metric] for run in ordered])
    return [
        RunRow(rank=rank, run_id=run, means=scores.run_means[run], answered=answered[run])
        for rank, run in zip(ranks, ordered, strict=False)
    ]
