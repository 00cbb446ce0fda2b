"""Correlation with a truth leaderboard, as autojudge-evaluate 1.1.0's `meta-evaluate` computes it (no ORM).

A leaderboard here is run id -> score (a run's `all` row, or its row on one topic).

- Alignment: the truth's runs in run-id order. A run the judged leaderboard lacks is
  0 (`zero`, the tool's `default`), left out (`skip`), or an error (`error`, which also
  refuses a judged run the truth lacks). A judged run the truth lacks is otherwise
  left out.
- `kendall` (tau-b), `pearson`, `spearman` of the aligned scores; `tauap_b` the mean of
  the two directed tau_ap_b, a direction whose given ranking ties every run counting 0;
  `tau_gap` with the truth supplying the gaps and the judged scores the order, ties in
  the judged scores broken by run-id order.
- `kendall@k`: over the runs both leaderboards have, the truth's k best (ties at the
  boundary by run id), tau-b there.
- Per topic: the same figures on each topic both leaderboards have rows for, with the
  same missing-run rule, and each figure's mean over the topics where it is defined. A
  topic whose aligned scores all tie on either side has no figures (the tool's tau_ap_b
  and tau_GAP would still give one there, from the tie-breaking alone), and is counted
  apart (`TopicFigures.tied`).

Fewer than 3 aligned runs give no figure (the tool stops with an error there).
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from metaeval import rankcorr

METHODS = ("kendall", "pearson", "spearman", "tauap_b", "tau_gap")
ON_MISSING = ("zero", "skip", "error")
MIN_RUNS = 3
NAN = float("nan")

Leaderboard = Mapping[str, float]


class RunsMismatch(ValueError):
    """`error` was chosen and the two leaderboards do not hold the same runs.

    Its text ends with the command line's remedy; `differences` (the runs missing on each side) and `where` let a
    page word the remedy as its form names it."""

    def __init__(self, differences: str, where: str = "") -> None:
        super().__init__(
            f"the leaderboards hold different runs{where} ({differences}); "
            "--on-missing zero counts a missing run 0, skip leaves it out"
        )
        self.differences = differences
        self.where = where


class TooFewRuns(ValueError):
    """Fewer than 3 runs are left to correlate."""


def top_k_name(k: int) -> str:
    return f"kendall@{k}"


def figure_names(top_k: int) -> tuple[str, ...]:
    return (*METHODS, top_k_name(top_k))


@dataclass(frozen=True)
class Aligned:
    runs: list[str]
    truth: list[float]
    judged: list[float]
    missing_in_judged: list[str]  # the truth's runs the judged leaderboard lacks
    missing_in_truth: list[str]  # the judged runs the truth lacks (always left out)


def rankings_align(truth: Leaderboard, judged: Leaderboard, *, on_missing: str, where: str = "") -> Aligned:
    """The truth's runs in run-id order with both scores, a run the judged leaderboard lacks as `on_missing` says."""
    if on_missing not in ON_MISSING:
        raise ValueError(f"unknown missing-run rule {on_missing!r}: {', '.join(ON_MISSING)}")
    missing_in_judged = sorted(set(truth) - set(judged))
    missing_in_truth = sorted(set(judged) - set(truth))
    if on_missing == "error" and (missing_in_judged or missing_in_truth):
        parts = []
        if missing_in_judged:
            parts.append(f"missing in the judged leaderboard: {', '.join(missing_in_judged)}")
        if missing_in_truth:
            parts.append(f"missing in the truth: {', '.join(missing_in_truth)}")
        raise RunsMismatch("; ".join(parts), where)
    runs = [run for run in sorted(truth) if run in judged or on_missing == "zero"]
    return Aligned(
        runs=runs,
        truth=[float(truth[run]) for run in runs],
        judged=[float(judged.get(run, 0.0)) for run in runs],
        missing_in_judged=missing_in_judged,
        missing_in_truth=missing_in_truth,
    )


def coefficient(method: str, truth: Sequence[float], judged: Sequence[float]) -> float:
    """One figure of two aligned score lists (NaN where undefined: a constant list)."""
    x, y = np.asarray(truth, dtype=float), np.asarray(judged, dtype=float)
    if method == "kendall":
        return float(rankcorr.tau_b(x, y)[0])
    if method == "pearson":
        # A constant list has no r (its deviations from a mean rounded apart from it would give one near 0).
        return NAN if x.min() == x.max() or y.min() == y.max() else float(rankcorr.pearson(x, y)[0])
    if method == "spearman":
        return float(rankcorr.spearman(x, y)[0])
    if method == "tauap_b":
        return tau_ap_b(x, y)
    if method == "tau_gap":
        return float(rankcorr.tau_gap(x, y)[0])
    raise ValueError(f"unknown method {method!r}: {', '.join(METHODS)}")


def tau_ap_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """The mean of tau_ap_b(x|y) and tau_ap_b(y|x); a direction whose given ranking ties every run counts 0."""
    given_y, given_x = rankcorr.tau_ap_b_directions(x, y)
    return (_zero_if_nan(float(given_y[0])) + _zero_if_nan(float(given_x[0]))) / 2


def _zero_if_nan(value: float) -> float:
    return 0.0 if math.isnan(value) else float(value)


def truth_top_runs(truth: Leaderboard, k: int) -> list[str]:
    """The truth's k best runs, ties by run id."""
    return sorted(sorted(truth), key=lambda run: -truth[run])[:k]


def correlations(truth: Leaderboard, judged: Leaderboard, *, on_missing: str, top_k: int, where: str = "") -> dict:
    """Every figure of one pair of leaderboards (METHODS and kendall@k); TooFewRuns below 3 aligned runs."""
    aligned = rankings_align(truth, judged, on_missing=on_missing, where=where)
    if len(aligned.runs) < MIN_RUNS:
        raise TooFewRuns(f"{len(aligned.runs)} runs to correlate{where}: at least {MIN_RUNS} are needed")
    figures = {method: coefficient(method, aligned.truth, aligned.judged) for method in METHODS}
    shared = {run: truth[run] for run in truth if run in judged}
    top = truth_top_runs(shared, top_k)
    if len(top) < MIN_RUNS:
        figures[top_k_name(top_k)] = NAN
    else:
        top.sort()
        figures[top_k_name(top_k)] = coefficient("kendall", [truth[r] for r in top], [judged[r] for r in top])
    return figures


def all_tied(truth: Leaderboard, judged: Leaderboard, *, on_missing: str) -> bool:
    """Whether the aligned scores of either side are all one value: no ranking to correlate."""
    aligned = rankings_align(truth, judged, on_missing=on_missing)
    return any(len(set(scores)) <= 1 for scores in (aligned.truth, aligned.judged))


@dataclass
class TopicFigures:
    """The figures of each topic (None: fewer than 3 runs there; every figure NaN: its scores all tie on a side,
    the topic listed in `tied`) and their means over the topics that have them."""

    topics: dict[str, dict[str, float] | None] = field(default_factory=dict)
    mean: dict[str, float] = field(default_factory=dict)
    counted: dict[str, int] = field(default_factory=dict)
    tied: list[str] = field(default_factory=list)

    @property
    def too_few(self) -> list[str]:
        """The topics with fewer than 3 runs."""
        return [topic for topic, figures in self.topics.items() if figures is None]


def per_topic_correlations(
    truth: Mapping[str, Leaderboard], judged: Mapping[str, Leaderboard], *, on_missing: str, top_k: int
) -> TopicFigures:
    """`truth` and `judged`: topic -> run -> score. The topics both have, in id order."""
    result = TopicFigures()
    for topic in sorted(set(truth) & set(judged)):
        try:
            result.topics[topic] = correlations(
                truth[topic], judged[topic], on_missing=on_missing, top_k=top_k, where=f" on topic {topic}"
            )
        except TooFewRuns:
            result.topics[topic] = None
            continue
        if all_tied(truth[topic], judged[topic], on_missing=on_missing):
            result.topics[topic] = dict.fromkeys(figure_names(top_k), NAN)
            result.tied.append(topic)
    for name in figure_names(top_k):
        values = [f[name] for f in result.topics.values() if f is not None and not math.isnan(f[name])]
        result.counted[name] = len(values)
        result.mean[name] = math.fsum(values) / len(values) if values else NAN
    return result
