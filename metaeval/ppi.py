"""Calibrated run scores from an LLM condition on every answer and people's scores on a sample of them.

Prediction-powered inference (Angelopoulos et al., Science 2023), per run and
metric. The items are a run's answers. With x_t the LLM condition's score of the
run on topic t (every one of the N topics; 0 where the run did not answer), A
the topics it answered, S the n answers of A people scored (the sample),
h_t their scores and d_t = h_t - x_t:

    correction = |A|/N * mean over S of d_t
    estimate = mean over all topics of x_t + correction
    variance = var(x) / N + (|A|/N)^2 var(d) / n        (sample variances)
    95% interval = estimate +- 1.96 sqrt(variance)

The run's mean over N topics counts an unanswered topic 0 on both sides, so
only its answered topics need correcting: hence the |A|/N. A run with a
single sampled answer takes var(d) pooled over every run's sampled answers; a
run with none has no estimate (the caller says so). The estimate is unbiased
for the run's human mean, and the LLM only narrows the interval as far as its
scores follow the human ones.

Everything here is plain data (no ORM); `ppi_simulate` checks the method on
labels whose truth is known: given every answer's human score, it samples a
share of each run's answers with several seeds and reports how close the
estimates rank the runs to the human ranking (Kendall's tau) and how often the
intervals hold the human means.
"""

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assessor.scoring.exact import exact_mean, exact_sum
from assessor.scoring.scores import RunTopic
from metaeval.stats import kendall_tau_b

Z_95 = 1.959963984540054  # the standard normal's 97.5% quantile


@dataclass(frozen=True)
class RunEstimate:
    run_id: str
    llm_mean: float  # the LLM condition's mean over every topic
    correction: float  # |A|/N times the mean human-minus-LLM difference on the sampled answers
    estimate: float
    low: float
    high: float
    sampled: int  # the run's answers people scored, behind its correction
    answered: int  # |A|, the topics the run answered

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


# run -> the topics of its answers that people scored (the sample)
AnswerSample = Mapping[str, Sequence[str]]


def _variance(values: Sequence[float]) -> float:
    return statistics.variance(values) if len(values) > 1 else 0.0


def _exact_estimate(
    llm_scores: Sequence[float], sampled_human: Sequence[float], sampled_llm: Sequence[float], *, answered: int
) -> tuple[float, float, float]:
    """(LLM mean, correction, estimate) of a run, each of the scores' fractions and rounded once
    (assessor.scoring.exact), so that estimates that are one number tie, as the human means' ranking does."""
    topics, sampled = len(llm_scores), len(sampled_human)
    llm_mean = exact_sum(llm_scores) / topics
    correction = (exact_sum(sampled_human) - exact_sum(sampled_llm)) * answered / (topics * sampled)
    return float(llm_mean), float(correction), float(llm_mean + correction)


def ppi_estimates(
    *,
    llm: Mapping[RunTopic, float],
    human: Mapping[RunTopic, float],
    runs: Sequence[str],
    topics: Sequence[str],
    sample: AnswerSample,
    z: float = Z_95,
) -> list[RunEstimate]:
    """Each sampled run's calibrated mean of one metric over `topics` (best first); a run without a sampled
    answer is left out."""
    topic_set = set(topics)
    differences: dict[str, list[float]] = {}
    for run in runs:
        for topic in sample.get(run, ()):
            if topic not in topic_set:
                raise ValueError(f"run {run}'s sampled answer on topic {topic} is not on one of the topics")
            if (run, topic) not in human:
                raise ValueError(f"run {run}'s sampled answer on topic {topic} has no human score")
        differences[run] = [human[(run, topic)] - llm.get((run, topic), 0.0) for topic in sample.get(run, ())]
    pooled = [d for values in differences.values() for d in values]
    if not pooled:
        raise ValueError("the human sample holds no answer")
    if len(pooled) < 2:
        raise ValueError("the human sample holds one answer: a variance needs two")
    pooled_variance = statistics.variance(pooled)
    estimates = []
    for run in runs:
        d = differences[run]
        if not d:
            continue
        x = [llm.get((run, topic), 0.0) for topic in topics]
        answered = len({topic for topic in topics if (run, topic) in llm} | set(sample[run]))
        share = answered / len(topics)
        llm_mean, correction, estimate = _exact_estimate(
            x, [human[(run, topic)] for topic in sample[run]], [llm.get((run, topic), 0.0) for topic in sample[run]],
            answered=answered,
        )  # fmt: skip
        variance_d = _variance(d) if len(d) > 1 else pooled_variance
        spread = z * math.sqrt(_variance(x) / len(x) + share**2 * variance_d / len(d))
        estimates.append(
            RunEstimate(
                run_id=run,
                llm_mean=llm_mean,
                correction=correction,
                estimate=estimate,
                low=estimate - spread,
                high=estimate + spread,
                sampled=len(d),
                answered=answered,
            )
        )
    return sorted(estimates, key=lambda e: (-e.estimate, e.run_id))


def answer_sample(answers: AnswerSample, *, fraction: float, seed: int) -> dict[str, list[str]]:
    """A seeded sample of `fraction` of each run's answers (at least one), drawn run by run in run-id order."""
    rng = random.Random(seed)
    sample = {}
    for run in sorted(answers):
        topics = sorted(answers[run])
        if topics:
            size = min(len(topics), max(1, round(fraction * len(topics))))
            sample[run] = sorted(rng.sample(topics, size))
    return sample


def run_means_over(scores: Mapping[RunTopic, float], *, runs: Sequence[str], topics: Sequence[str]) -> dict[str, float]:
    """Each run's mean over `topics` (a missing one counts 0), of its scores' fractions (assessor.scoring.exact)."""
    return {run: exact_mean((scores.get((run, topic), 0.0) for topic in topics), len(topics)) for run in runs}


def sample_only_means(
    human: Mapping[RunTopic, float], *, sample: AnswerSample, answered: Mapping[str, int], topics: int
) -> dict[str, float]:
    """Each run's mean from its sampled human scores alone (no LLM): |A|/N times their mean, of the scores'
    fractions and rounded once (assessor.scoring.exact), so that runs whose means are one number tie: 5/14 of
    a run that answered 5 of 14 topics and 60/168 of one that answered 12 of 14 are one float."""
    return {
        run: float(exact_sum(human[(run, topic)] for topic in chosen) * answered[run] / (topics * len(chosen)))
        for run, chosen in sample.items()
    }


def _tau(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    runs = sorted(a)
    tau = kendall_tau_b([a[run] for run in runs], [b[run] for run in runs])
    return tau if tau == tau else 0.0  # NaN when one side ties everywhere


@dataclass(frozen=True)
class SimulationRow:
    fraction: float
    sample_answers: int  # the answers people scored in each draw, over every run
    answers: int  # every answer of the condition
    repeats: int
    tau_mean: float  # estimates' run ranking against the human one, averaged over the seeds
    tau_min: float
    coverage: float  # the share of (run, seed) whose interval holds the human mean
    half_width: float  # the intervals' mean half width
    error: float  # the mean absolute difference of the estimates from the human means
    tau_sample_only: float  # the human scores of the sample alone, ranked, against the full human ranking

    @property
    def fraction_text(self) -> str:
        return f"{self.fraction:.0%}"

    @property
    def coverage_text(self) -> str:
        return f"{self.coverage:.1%}"


@dataclass(frozen=True)
class Simulation:
    runs: int
    topics: int
    answers: int
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
    """How well the estimates from a sample of each share of the answers recover the human run means (known on
    every answer: `human` holds a score for each answer, `llm` the cheap source's)."""
    truth = run_means_over(human, runs=runs, topics=topics)
    answers = {run: [topic for topic in topics if (run, topic) in human] for run in runs}
    answered = {run: len(chosen) for run, chosen in answers.items()}
    total = sum(answered.values())
    rows = []
    for fraction in fractions:
        taus, sample_taus, covered, widths, errors = [], [], 0, [], []
        size = 0
        for seed in seeds:
            sample = answer_sample(answers, fraction=fraction, seed=seed)
            size = sum(len(chosen) for chosen in sample.values())
            estimates = ppi_estimates(llm=llm, human=human, runs=runs, topics=topics, sample=sample)
            taus.append(_tau({e.run_id: e.estimate for e in estimates}, truth))
            alone = sample_only_means(human, sample=sample, answered=answered, topics=len(topics))
            sample_taus.append(_tau({run: alone.get(run, 0.0) for run in runs}, truth))
            covered += sum(1 for e in estimates if e.low <= truth[e.run_id] <= e.high)
            widths += [e.half_width for e in estimates]
            errors += [abs(e.estimate - truth[e.run_id]) for e in estimates]
        rows.append(
            SimulationRow(
                fraction=fraction,
                sample_answers=size,
                answers=total,
                repeats=len(seeds),
                tau_mean=statistics.fmean(taus),
                tau_min=min(taus),
                coverage=covered / len(widths),
                half_width=statistics.fmean(widths),
                error=statistics.fmean(errors),
                tau_sample_only=statistics.fmean(sample_taus),
            )
        )
    llm_means = run_means_over(llm, runs=runs, topics=topics)
    return Simulation(
        runs=len(runs),
        topics=len(topics),
        answers=total,
        tau_llm_only=_tau(llm_means, truth),
        error_llm_only=statistics.fmean(abs(llm_means[run] - truth[run]) for run in runs),
        rows=rows,
    )
