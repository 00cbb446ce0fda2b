"""Calibrated estimates over stored sources: the data side of metaeval.ppi.

`calibration_build` reads two score sources (an LLM condition on every topic,
a human condition on some) and estimates each run's human-equivalent mean.
`llm_like_scores` makes, from a human condition's labels, the scores an LLM
with a known confusion pattern would have given: a way to check the method
on data whose truth is known (docs/metaeval.md, "Calibrated estimates").
"""

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from assessor.models import Answer
from assessor.scoring.scores import RunTopic, Scores
from assignment.scoring import NuggetCounts, condition_scores
from assignment.selectors import assignment_label_pairs
from metaeval.ppi import RunEstimate, Simulation, ppi_estimates, ppi_simulate, topic_sample
from metaeval.sources import source_load
from nuggets.models import Nugget

# P(LLM label | human label) of an LLM assigner that, like the ones the nugget paper measured,
# calls partial support far more often than people do. Rows: the human label.
LLM_LIKE_CONFUSION: dict[str, dict[str, float]] = {
    "support": {"support": 0.70, "partial_support": 0.25, "not_support": 0.05},
    "partial_support": {"support": 0.20, "partial_support": 0.55, "not_support": 0.25},
    "not_support": {"support": 0.03, "partial_support": 0.22, "not_support": 0.75},
}


def metric_values(scores: Scores, metric: str) -> dict[RunTopic, float]:
    if metric not in scores.metrics:
        raise LookupError(f"no metric {metric!r}: the source has {', '.join(scores.metrics)}")
    return {key: values[metric] for key, values in scores.per_topic.items()}


@dataclass(frozen=True)
class Calibration:
    metric: str
    topics: list[str]  # every topic the LLM condition scores
    sample: list[str]  # the topics the human scores are taken from
    estimates: list[RunEstimate]
    # The human run means over every topic, where the human condition has them all (a check of the intervals).
    human_means: dict[str, float] | None


def calibration_build(
    *, llm: str, human: str, metric: str, fraction: float | None = None, seed: int = 0
) -> Calibration:
    """Estimates from the sources named as the meta-evaluation names them.

    The sample is the human condition's own topics; with `fraction`, a seeded
    sample of that share of them (to see what a smaller campaign would get).
    """
    _, llm_scores = source_load(llm)
    _, human_scores = source_load(human)
    topics = sorted(llm_scores.topics)
    judged = sorted(set(human_scores.topics) & set(topics))
    if len(judged) < 2:
        raise LookupError(f"{human} scores {len(judged)} of the {llm} topics: at least two are needed")
    sample = topic_sample(judged, fraction=fraction, seed=seed) if fraction is not None else judged
    human_values = metric_values(human_scores, metric)
    estimates = ppi_estimates(
        llm=metric_values(llm_scores, metric), human=human_values, runs=llm_scores.runs, topics=topics, sample=sample
    )
    complete = judged == topics
    human_means = (
        {run: human_scores.run_means.get(run, {}).get(metric, 0.0) for run in llm_scores.runs} if complete else None
    )
    return Calibration(metric=metric, topics=topics, sample=sample, estimates=estimates, human_means=human_means)


def _draw(rng: random.Random, row: Mapping[str, float]) -> str:
    labels = sorted(row)
    return rng.choices(labels, weights=[row[label] for label in labels])[0]


def llm_like_scores(
    *, nuggets: str, assigner: str, seed: int, confusion: Mapping[str, Mapping[str, float]] = LLM_LIKE_CONFUSION
) -> Scores:
    """The condition's scores had each label been replaced by a draw from `confusion` (seeded)."""
    pairs = assignment_label_pairs(nuggets=nuggets, assigner=assigner)
    if not pairs:
        raise LookupError(f"no assignment labels for {nuggets}/{assigner}")
    rng = random.Random(seed)
    importance = dict(Nugget.objects.filter(nugget_set__name=nuggets).values_list("id", "importance"))
    topic_of = dict(Nugget.objects.filter(nugget_set__name=nuggets).values_list("id", "nugget_set__topic_id"))
    answers = {
        answer_id: ((run, topic), words)
        for answer_id, run, topic, words in Answer.objects.filter(id__in={a for a, _ in pairs}).values_list(
            "id", "run__run_id", "topic_id", "words"
        )
    }
    tallies: dict[RunTopic, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    for (answer_id, nugget_id), label in sorted(pairs.items()):
        tallies[answers[answer_id][0]][(importance[nugget_id], _draw(rng, confusion[label]))] += 1
    counts: dict[str, list[str]] = defaultdict(list)
    for nugget_id, topic in topic_of.items():
        counts[topic].append(importance[nugget_id])
    return condition_scores(
        tallies={key: dict(tally) for key, tally in tallies.items()},
        nugget_counts={topic: NuggetCounts.of(values) for topic, values in counts.items()},
        words=dict(answers.values()),
    )


def simulation_on_condition(
    *, nuggets: str, assigner: str, metric: str, fractions: Sequence[float], seeds: Sequence[int], perturb_seed: int = 0
) -> Simulation:
    """The PPI check on a human condition: its labels as the truth, an LLM-like copy of them as the cheap source."""
    _, human_scores = source_load(f"{nuggets}/{assigner}")
    llm_scores = llm_like_scores(nuggets=nuggets, assigner=assigner, seed=perturb_seed)
    return ppi_simulate(
        llm=metric_values(llm_scores, metric),
        human=metric_values(human_scores, metric),
        runs=human_scores.runs,
        topics=human_scores.topics,
        fractions=fractions,
        seeds=seeds,
    )
