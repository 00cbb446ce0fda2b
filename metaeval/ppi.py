"""Calibrated run scores from an LLM condition on every topic and people's labels on a sample of them.

Prediction-powered inference (Angelopoulos et al., Science 2023), per run and
metric. With x_t the LLM condition's score of the run on topic t (every one
of the N topics), h_t the human condition's score on a topic of the random
sample S (n topics), and d_t = h_t - x_t:

    estimate = mean over all topics of x_t + mean over S of d_t
    variance = var(x) / N + var(d) / n        (sample variances)
    95% interval = estimate +- 1.96 sqrt(variance)

A topic the run did not answer scores 0 in both, as in the run means. The
sample is drawn from the topics, as a campaign judges whole topics; the
estimate is unbiased for the run's human mean over all N topics, and the LLM
only narrows the interval as far as its scores follow the human ones.

Everything here is plain data (no ORM); `ppi_simulate` checks the method on
labels whose truth is known: given every topic's human scores, it draws
samples of several sizes with several seeds and reports how close the
estimates rank the runs to the human ranking (Kendall's tau) and how often the
intervals hold the human means.
"""

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assessor.scoring.scores import RunTopic
from metaeval.stats import kendall_tau_b

Z_95 = 1.959963984540054  # the standard normal's 97.5% quantile


@dataclass(frozen=True)
class RunEstimate:
    run_id: str
    llm_mean: float  # the LLM condition's mean over every topic
    correction: float  # the mean human-minus-LLM difference on the sample
    estimate: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def _variance(values: Sequence[float]) -> float:
    return statistics.variance(values) if len(values) > 1 else 0.0


def ppi_estimates(
    *,
    llm: Mapping[RunTopic, float],
    human: Mapping[RunTopic, float],
    runs: Sequence[str],
    topics: Sequence[str],
    sample: Sequence[str],
    z: float = Z_95,
) -> list[RunEstimate]:
    """Each run's calibrated mean of one metric over `topics`, from the human scores on `sample` (best first)."""
    if not sample:
        raise ValueError("the human sample holds no topic")
    if not set(sample) <= set(topics):
        raise ValueError("the sample must be drawn from the topics")
    estimates = []
    for run in runs:
        x = [llm.get((run, topic), 0.0) for topic in topics]
        d = [human.get((run, topic), 0.0) - llm.get((run, topic), 0.0) for topic in sample]
        llm_mean = math.fsum(x) / len(x)
        correction = math.fsum(d) / len(d)
        estimate = llm_mean + correction
        spread = z * math.sqrt(_variance(x) / len(x) + _variance(d) / len(d))
        estimates.append(
            RunEstimate(
                run_id=run,
                llm_mean=llm_mean,
                correction=correction,
                estimate=estimate,
                low=estimate - spread,
                high=estimate + spread,
            )
        )
    return sorted(estimates, key=lambda e: (-e.estimate, e.run_id))


def topic_sample(topics: Sequence[str], *, fraction: float, seed: int) -> list[str]:
    """A seeded random sample of the topics, at least two (a variance needs two)."""
    size = min(len(topics), max(2, round(fraction * len(topics))))
    return sorted(random.Random(seed).sample(sorted(topics), size))


def run_means_over(scores: Mapping[RunTopic, float], *, runs: Sequence[str], topics: Sequence[str]) -> dict[str, float]:
    return {run: math.fsum(scores.get((run, topic), 0.0) for topic in topics) / len(topics) for run in runs}


def _tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    runs = sorted(a)
    tau = kendall_tau_b([a[run] for run in runs], [b[run] for run in runs])
    return tau if tau == tau else 0.0  # NaN when one side ties everywhere


@dataclass(frozen=True)
class SimulationRow:
    fraction: float
    sample_topics: int
    repeats: int
    tau_mean: float  # estimates' run ranking against the human one, averaged over the seeds
    tau_min: float
    coverage: float  # the share of (run, seed) whose interval holds the human mean
    half_width: float  # the intervals' mean half width
    error: float  # the mean absolute difference of the estimates from the human means
    tau_sample_only: float  # the human scores of the sample alone, ranked, against the full human ranking


@dataclass(frozen=True)
class Simulation:
    runs: int
    topics: int
    tau_llm_only: float  # the LLM condition's run ranking against the human one
    error_llm_only: float  # the mean absolute difference of the LLM's run means from the human ones
    rows: list[SimulationRow]


def ppi_simulate(
    *,
    llm: Mapping[RunTopic, float],
    human: Mapping[RunTopic, float],
    runs: Sequence[str],
    topics: Sequence[str],
    fractions: Sequence[float],
    seeds: Sequence[int],
) -> Simulation:
    """How well the estimates from a sample of each size recover the human run means (known on every topic)."""
    truth = run_means_over(human, runs=runs, topics=topics)
    rows = []
    for fraction in fractions:
        taus, sample_taus, covered, widths, errors = [], [], 0, [], []
        size = 0
        for seed in seeds:
            sample = topic_sample(topics, fraction=fraction, seed=seed)
            size = len(sample)
            estimates = ppi_estimates(llm=llm, human=human, runs=runs, topics=topics, sample=sample)
            taus.append(_tau({e.run_id: e.estimate for e in estimates}, truth))
            sample_taus.append(_tau(run_means_over(human, runs=runs, topics=sample), truth))
            covered += sum(1 for e in estimates if e.low <= truth[e.run_id] <= e.high)
            widths += [e.half_width for e in estimates]
            errors += [abs(e.estimate - truth[e.run_id]) for e in estimates]
        rows.append(
            SimulationRow(
                fraction=fraction,
                sample_topics=size,
                repeats=len(seeds),
                tau_mean=statistics.fmean(taus),
                tau_min=min(taus),
                coverage=covered / (len(seeds) * len(runs)),
                half_width=statistics.fmean(widths),
                error=statistics.fmean(errors),
                tau_sample_only=statistics.fmean(sample_taus),
            )
        )
    llm_means = run_means_over(llm, runs=runs, topics=topics)
    return Simulation(
        runs=len(runs),
        topics=len(topics),
        tau_llm_only=_tau(llm_means, truth),
        error_llm_only=statistics.fmean(abs(llm_means[run] - truth[run]) for run in runs),
        rows=rows,
    )
