"""Calibrated estimates over stored sources: the data side of metaeval.ppi.

`calibration_build` reads two score sources (an LLM condition on every topic,
a human condition on some) and estimates each run's human-equivalent mean.
A condition's score family makes, from a human condition's labels, the scores
an LLM with a known confusion pattern would have given (`ScoreFamily.llm_like`,
assignment.comparison): a way to check the method on data whose truth is known
(docs/metaeval.md, "Calibrated estimates").
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from assessor.scoring.scores import RunTopic, Scores
from metaeval.ppi import RunEstimate, Simulation, answer_sample, ppi_estimates, ppi_simulate, run_means_over
from metaeval.sources import source_family, source_load


def metric_values(scores: Scores, metric: str) -> dict[RunTopic, float]:
    if metric not in scores.metrics:
        raise LookupError(f"no metric {metric!r}: the source has {', '.join(scores.metrics)}")
    return {key: values[metric] for key, values in scores.per_topic.items()}


@dataclass(frozen=True)
class Calibration:
    metric: str
    topics: list[str]  # every topic the LLM condition scores
    sample: dict[str, list[str]]  # run -> the topics of its answers whose human scores are used
    estimates: list[RunEstimate]
    # Runs no person scored (in the sample): left out, as nothing corrects their LLM mean.
    unjudged: list[str]
    # The human means of the runs people scored on every answer (a check of their intervals).
    human_means: dict[str, float]

    @property
    def sample_answers(self) -> int:
        return sum(len(topics) for topics in self.sample.values())

    @property
    def covered(self) -> int:
        """The intervals that hold the human mean, of the runs that have one."""
        return sum(
            1 for e in self.estimates if e.run_id in self.human_means and e.low <= self.human_means[e.run_id] <= e.high
        )


def calibration_build(
    *, llm: str, human: str, metric: str, fraction: float | None = None, seed: int = 0
) -> Calibration:
    """Estimates from the sources named as the meta-evaluation names them.

    The sample is every answer the human condition scores; with `fraction`, a
    seeded sample of that share of each run's (to see what a smaller campaign
    would get).
    """
    _, llm_scores = source_load(llm)
    _, human_scores = source_load(human)
    topics = sorted(llm_scores.topics)
    llm_values = metric_values(llm_scores, metric)
    human_values = {key: value for key, value in metric_values(human_scores, metric).items() if key[1] in set(topics)}
    judged = {run: [topic for topic in topics if (run, topic) in human_values] for run in llm_scores.runs}
    if sum(len(chosen) for chosen in judged.values()) < 2:
        raise LookupError(f"{human} scores fewer than two of the answers {llm} scores: at least two are needed")
    sample = answer_sample(judged, fraction=fraction, seed=seed) if fraction is not None else judged
    sample = {run: chosen for run, chosen in sample.items() if chosen}
    estimates = ppi_estimates(llm=llm_values, human=human_values, runs=llm_scores.runs, topics=topics, sample=sample)
    answered: dict[str, set[str]] = defaultdict(set)
    for run, topic in llm_values:
        answered[run].add(topic)
    complete = [run for run in llm_scores.runs if judged[run] and answered[run] <= set(judged[run])]
    return Calibration(
        metric=metric,
        topics=topics,
        sample=sample,
        estimates=estimates,
        unjudged=[run for run in llm_scores.runs if run not in sample],
        human_means=run_means_over(human_values, runs=complete, topics=topics),
    )


def simulation_on_condition(
    *, nuggets: str, assigner: str, metric: str, fractions: Sequence[float], seeds: Sequence[int], perturb_seed: int = 0
) -> Simulation:
    """The PPI check on a human condition: its labels as the truth, an LLM-like copy of them as the cheap source."""
    source, human_scores = source_load(f"{nuggets}/{assigner}")
    family = source_family(source)
    if family.llm_like is None:
        raise LookupError(f"the {family.title} make no LLM-like copy of their labels")
    llm_scores = family.llm_like((nuggets, assigner), perturb_seed)
    return ppi_simulate(
        llm=metric_values(llm_scores, metric),
        human=metric_values(human_scores, metric),
        runs=human_scores.runs,
        topics=human_scores.topics,
        fractions=fractions,
        seeds=seeds,
    )


def calibration_summary(result: Calibration) -> str:
    """What the estimates rest on, and what they leave out: the line above their table."""
    runs = len(result.estimates) + len(result.unjudged)
    text = (
        f"{result.metric}: people's scores on {result.sample_answers} answers of {len(result.estimates)} of the "
        f"{runs} runs, over {len(result.topics)} topics; 95% intervals"
    )
    if result.unjudged:
        text += (
            f". Left out, as no person scored any of their answers: {len(result.unjudged)} runs "
            f"({', '.join(result.unjudged)})"
        )
    if result.human_means:
        text += (
            f". {result.covered} of the {len(result.human_means)} intervals of runs people scored on every answer "
            "hold their human means"
        )
    return text


def simulation_summary(simulation: Simulation) -> str:
    return (
        f"{simulation.runs} runs x {simulation.topics} topics, {simulation.answers} answers scored by people; "
        f"the LLM-like copy alone ranks the runs at tau {simulation.tau_llm_only:.3f}, "
        f"its run means off by {simulation.error_llm_only:.4f} on average"
    )
