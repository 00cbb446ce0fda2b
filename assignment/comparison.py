"""The nugget conditions in the meta-evaluation: what it asks of a condition beyond its scores.

Registered with the conditions' score family (assignment.parts; assessor.registry.ScoreFamily): the labels two
assigners share on one nugget list, the condition's descriptive statistics, the assigner behind it, and an
LLM-like copy of its labels to check calibrated estimates on (metaeval.calibration).
"""

import random
from collections import defaultdict
from collections.abc import Mapping

from django.db.models import Count

from assessor.models import Answer
from assessor.registry import Crosstab
from assessor.scoring.lifecycle import counted_sql
from assessor.scoring.paired import paired_label_counts
from assessor.scoring.scores import RunTopic, Scores
from assignment.kinds import LABEL_FAMILY
from assignment.models import AssignmentLabel
from assignment.scoring import NuggetCounts, condition_scores
from assignment.selectors import assignment_label_pairs, condition_labels, condition_require, counted_labels
from assignment.study import LABELS
from metaeval.stats import NuggetRow, nugget_condition_describe
from nuggets.models import Nugget
from nuggets.selectors import nugget_sets_counted_q

# P(LLM label | human label) of an LLM assigner that, like the ones the nugget paper measured,
# calls partial support far more often than people do. Rows: the human label.
LLM_LIKE_CONFUSION: dict[str, dict[str, float]] = {
    "support": {"support": 0.70, "partial_support": 0.25, "not_support": 0.05},
    "partial_support": {"support": 0.20, "partial_support": 0.55, "not_support": 0.25},
    "not_support": {"support": 0.03, "partial_support": 0.22, "not_support": 0.75},
}


def condition_crosstab(a: tuple[str, ...], b: tuple[str, ...]) -> Crosstab:
    """The registry's `ScoreFamily.crosstab`: (label by a, label by b) over the (answer, nugget) pairs both
    assigners labelled on a's nugget list, with the numbers of a's and of b's labels in all."""
    nuggets, assigner_a = a
    assigner_b = b[1]
    labels = counted_labels().filter(nugget__nugget_set__name=nuggets).order_by()
    if assigner_a == assigner_b:
        rows = labels.filter(assigner=assigner_a).values_list("label").annotate(n=Count("id"))
        counts = {(label, label): n for label, n in rows}
        return Crosstab(LABELS, counts, sum(counts.values()), sum(counts.values()))
    counted_nuggets = Nugget.objects.filter(nugget_sets_counted_q("nugget_set__"), nugget_set__name=nuggets)
    nugget_sql, nugget_params = counted_nuggets.values("id").query.sql_with_params()
    paired, total_a, total_b = paired_label_counts(
        model=AssignmentLabel, who="assigner", a=assigner_a, b=assigner_b, item=("answer_id", "nugget_id"),
        row_filter=counted_sql("{t}"), item_filter=f"{{t}}nugget_id IN ({nugget_sql})", item_params=list(nugget_params),
        totals=lambda: dict(
            labels.filter(assigner__in=[assigner_a, assigner_b]).values_list("assigner").annotate(n=Count("id"))
        ),
    )  # fmt: skip
    return Crosstab(LABELS, paired, total_a, total_b)


def condition_describe(columns: tuple[str, ...]) -> dict[str, float | int]:
    """The registry's `ScoreFamily.describe`: the nuggets of the condition's labelled topics and its labels
    (metaeval.stats.nugget_condition_describe). LookupError when it has no label."""
    nuggets, assigner = columns
    per_topic_label = (
        condition_labels(nuggets=nuggets, assigner=assigner)
        .order_by()
        .values_list("nugget__nugget_set__topic_id", "label")
        .annotate(n=Count("id"))
    )
    label_counts: dict[str, int] = defaultdict(int)
    topics: set[str] = set()
    for topic_id, label, n in per_topic_label:
        topics.add(topic_id)
        label_counts[label] += n
    if not topics:
        raise LookupError("no assignment labels for this nugget set and assigner")
    rows = (
        Nugget.objects.filter(
            nugget_sets_counted_q("nugget_set__"), nugget_set__name=nuggets, nugget_set__topic_id__in=topics
        )
        .order_by()
        .values_list("nugget_set__topic_id", "text", "importance")
    )
    nugget_rows = [NuggetRow(topic_id, len(text.split()), importance) for topic_id, text, importance in rows]
    return nugget_condition_describe(nugget_rows, dict(label_counts), len(topics))


def condition_require_columns(columns: tuple[str, ...]) -> None:
    """The registry's `ScoreFamily.require`."""
    nuggets, assigner = columns
    condition_require(nuggets=nuggets, assigner=assigner)


def condition_label_source(columns: tuple[str, ...]) -> tuple[str, str]:
    """The registry's `ScoreFamily.label_source`: the condition's assigner."""
    return LABEL_FAMILY, columns[1]


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
    nugget_rows = Nugget.objects.filter(nugget_set__name=nuggets).values_list(
        "id", "importance", "nugget_set__topic_id", "position"
    )
    importance = {nugget_id: value for nugget_id, value, _, _ in nugget_rows}
    topic_of = {nugget_id: topic for nugget_id, _, topic, _ in nugget_rows}
    position = {nugget_id: place for nugget_id, _, _, place in nugget_rows}
    answers = {
        answer_id: ((run, topic), words)
        for answer_id, run, topic, words in Answer.objects.filter(id__in={a for a, _ in pairs}).values_list(
            "id", "run__run_id", "topic_id", "words"
        )
    }
    tallies: dict[RunTopic, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    # Drawn in the labels' natural order (run, topic, the nugget's place in its list), not their database ids:
    # the same seed gives the same copy whatever order the files were imported in.
    for (answer_id, nugget_id), label in sorted(
        pairs.items(), key=lambda item: (answers[item[0][0]][0], position[item[0][1]])
    ):
        tallies[answers[answer_id][0]][(importance[nugget_id], _draw(rng, confusion[label]))] += 1
    counts: dict[str, list[str]] = defaultdict(list)
    for nugget_id, topic in topic_of.items():
        counts[topic].append(importance[nugget_id])
    return condition_scores(
        tallies={key: dict(tally) for key, tally in tallies.items()},
        nugget_counts={topic: NuggetCounts.of(values) for topic, values in counts.items()},
        words=dict(answers.values()),
    )


def condition_llm_like(columns: tuple[str, ...], seed: int) -> Scores:
    """The registry's `ScoreFamily.llm_like`: `llm_like_scores` with LLM_LIKE_CONFUSION."""
    nuggets, assigner = columns
    return llm_like_scores(nuggets=nuggets, assigner=assigner, seed=seed)
