"""The pairs of reports PrefNugget compares, read from the stored answers (the sampling itself is
`preferences.sampling`, pure)."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from assessor.models import Answer, Run
from preferences.sampling import report_pairs


@dataclass(frozen=True)
class PlannedPair:
    topic_id: str
    first_run: str  # passage 1
    second_run: str
    first: int  # answer ids
    second: int

    @property
    def key(self) -> str:
        return f"{self.topic_id}|{self.first_run}|{self.second_run}"


def planned_pairs(*, topic_ids: Iterable[str], runs: list[Run] | None = None) -> list[PlannedPair]:
    """The pairs PrefNugget compares among the topics' reports (of `runs`; all when None), topic by topic in id
    order: the LLM job's items and the pages people judge on are the same pairs, in the same orientation."""
    topic_ids = sorted(set(topic_ids))
    rows = Answer.objects.filter(topic_id__in=topic_ids)
    if runs is not None:
        rows = rows.filter(run__in=runs)
    answers: dict[str, dict[str, int]] = defaultdict(dict)
    for topic_id, run_id, answer_id in rows.values_list("topic_id", "run__run_id", "pk").iterator(chunk_size=5000):
        answers[topic_id][run_id] = answer_id
    pairs = []
    for topic_id in topic_ids:
        of_run = answers.get(topic_id, {})
        for first, second in report_pairs(list(of_run)):
            pairs.append(PlannedPair(topic_id, first, second, of_run[first], of_run[second]))
    return pairs
