"""Borda counts from preference labels, as PrefNugget aggregates them (pure: no ORM).

Every label is counted both ways (its flipped copy swaps 1 and 2); ties and unreadable answers are
dropped. A report's Borda score is its wins minus its losses; it "beat" each report it won against.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

Key = tuple[str, str]  # (topic id, run id)


def flipped(label: int | None) -> int | None:
    """The label of the pair shown the other way round: 1 and 2 swap, a tie or nothing stays."""
    return {1: 2, 2: 1}.get(label, label) if label is not None else None


@dataclass
class Standing:
    wins: int = 0
    losses: int = 0
    beat: list[str] = field(default_factory=list)  # run ids, in the order of the labels
    lost_to: list[str] = field(default_factory=list)

    @property
    def borda(self) -> int:
        return self.wins - self.losses


def standings(labels: Iterable[tuple[str, str, str, int | None]]) -> dict[Key, Standing]:
    """(topic, first run, second run, label) -> each (topic, run)'s wins, losses and the runs it beat.

    A report that appears only in ties or unreadable answers has no standing, as in the reference.
    """
    given = list(labels)
    turned = [(topic_id, second, first, flipped(label)) for topic_id, first, second, label in given]
    table: dict[Key, Standing] = defaultdict(Standing)
    # Each report's own records, the given ones before the flipped ones: the order its `beat` list has in
    # the reference (which groups both by report, keeping their order).
    for topic_id, run_id, other, label in given + turned:
        if label == 1:
            table[(topic_id, run_id)].wins += 1
            table[(topic_id, run_id)].beat.append(other)
        elif label == 2:
            table[(topic_id, run_id)].losses += 1
            table[(topic_id, run_id)].lost_to.append(other)
    return dict(table)


def run_borda(table: dict[Key, Standing], topic_ids: Iterable[str], run_ids: Iterable[str]) -> dict[str, float]:
    """Each run's mean Borda score over the topics (a topic where it has no standing counts 0)."""
    topics = list(topic_ids)
    if not topics:
        return {run_id: 0.0 for run_id in run_ids}
    return {
        run_id: sum(table[(t, run_id)].borda if (t, run_id) in table else 0 for t in topics) / len(topics)
        for run_id in run_ids
    }
