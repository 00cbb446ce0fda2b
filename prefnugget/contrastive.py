"""PrefNugget's contrastive extraction, as rules over plain data (no ORM).

From a preference source's labels, per topic:
- every (winner, loser) pair: the labels counted both ways, ties and unreadable answers dropped
  (`preferences.borda.standings`); winners in the reference's order of its aggregates (by the key
  "run id:topic id" as a string), each winner's losers in the order of its records;
- ordered by Borda(winner) + 0.99 Borda(loser), descending and stable; the first 100 kept;
- worked in batches of up to 2 pairs; both pairs of a batch see the same questions so far (the
  distinct questions of the earlier batches, in the order first seen, [] at first);
- each answer's first 2 non-empty questions (stripped) are kept;
- the topic stops once it holds more than 20 distinct questions (exact strings);
- its bank is the first 20 distinct questions in the order they were produced.

The reference batches every topic's head pairs together; since a topic's batches see only that topic's
questions, working each topic's batches in turn gives the same calls and the same bank.

The reference's variant `random` (its null hypothesis, that winner/loser pairs do not help) takes no
preferences: `random_pairs_drawn` draws the topic's pairs, and the rest is the same.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from random import Random

from assessor.models.keys import published_id
from preferences.borda import standings
from preferences.sampling import report_pairs

MAX_PAIRS = 100  # the reference's max_pairs_considered
PAIRS_PER_BATCH = 2  # gen_batch_num_per_query
QUESTIONS_PER_PAIR = 2  # max_questions_per_pair
STOP_ABOVE = 20  # stop_collecting_at_nuggets_per_topic: a topic stops with more than this many
BANK_SIZE = 20  # max_nuggets_per_topic
LOSER_WEIGHT = 0.99

Label = tuple[str, str, str, int | None]  # topic id, first run, second run, label (1, 2, 0 or None)


@dataclass(frozen=True)
class WinnerLoser:
    topic_id: str
    winner: str  # run ids
    loser: str
    score: float  # Borda(winner) + 0.99 Borda(loser)


def labels_in_order(labels: Iterable[Label]) -> list[Label]:
    """The labels in the order the reference records them: per topic (by id), the order PrefNugget's sampling
    compares the pairs in among the topic's runs; a pair it would not compare after those, by run ids."""
    by_topic: dict[str, list[Label]] = {}
    for label in labels:
        by_topic.setdefault(label[0], []).append(label)
    ordered: list[Label] = []
    for topic_id in sorted(by_topic, key=published_id):
        rows = by_topic[topic_id]
        runs = {run for _topic, first, second, _label in rows for run in (first, second)}
        plan = {pair: index for index, pair in enumerate(report_pairs(sorted(runs)))}
        ordered += sorted(rows, key=lambda row: (plan.get((row[1], row[2]), len(plan)), row[1], row[2]))
    return ordered


def winner_loser_pairs(labels: Iterable[Label], *, keep: int = MAX_PAIRS) -> dict[str, list[WinnerLoser]]:
    """Per topic, its (winner, loser) pairs in processing order, at most `keep`; a topic with none is absent."""
    table = standings(labels_in_order(labels))
    borda = {key: standing.borda for key, standing in table.items()}
    found: dict[str, list[WinnerLoser]] = {}
    seen: set[tuple[str, str, str]] = set()
    # The reference's aggregates are grouped by the string "run id:topic id", in sorted order.
    for topic_id, winner in sorted(table, key=lambda key: f"{key[1]}:{published_id(key[0])}"):
        for loser in table[(topic_id, winner)].beat:
            if (topic_id, winner, loser) in seen:
                continue
            seen.add((topic_id, winner, loser))
            score = borda[(topic_id, winner)] + LOSER_WEIGHT * borda.get((topic_id, loser), 0)
            found.setdefault(topic_id, []).append(WinnerLoser(topic_id, winner, loser, score))
    return {
        topic_id: sorted(pairs, key=lambda pair: pair.score, reverse=True)[:keep]
        for topic_id, pairs in sorted(found.items())
    }


def random_pairs_drawn(
    topic_id: str, run_ids: Iterable[str], *, seed: str = "", keep: int = MAX_PAIRS
) -> list[WinnerLoser]:
    """The reference's random pairs of a topic (`extract_random_pairs`): its reports (by run id) shuffled by a
    generator seeded with the topic id, then every pair i < j in that order, the earlier shown as the winner;
    taken as drawn (no score), the first `keep`. A `seed` other than "" seeds with "seed:topic id" instead. The
    topic id is the published one: the same request draws the same pairs in every campaign."""
    reports = sorted(set(run_ids))
    published = published_id(topic_id)
    Random(f"{seed}:{published}" if seed else published).shuffle(reports)
    drawn = [
        WinnerLoser(topic_id, winner, loser, 0.0)
        for index, winner in enumerate(reports)
        for loser in reports[index + 1 :]
    ]
    return drawn[:keep]


def batches(pairs: Sequence[object], *, size: int = PAIRS_PER_BATCH) -> list[list[int]]:
    """The positions of a topic's pairs, batch by batch."""
    return [list(range(start, min(start + size, len(pairs)))) for start in range(0, len(pairs), size)]


def kept_questions(questions: Iterable[object], *, keep: int = QUESTIONS_PER_PAIR) -> list[str]:
    """An answer's questions as the reference's converter keeps them: strings, stripped, non-empty, the first `keep`."""
    return [q.strip() for q in questions if isinstance(q, str) and q.strip()][:keep]


class QuestionList:
    """A topic's distinct questions so far, in the order first produced."""

    def __init__(self) -> None:
        self._seen: dict[str, None] = {}

    def add(self, questions: Iterable[str]) -> None:
        for question in questions:
            self._seen.setdefault(question, None)

    def so_far(self) -> list[str]:
        return list(self._seen)

    def done(self, *, stop_above: int = STOP_ABOVE) -> bool:
        return len(self._seen) > stop_above


def bank_of(questions: Iterable[str], *, size: int = BANK_SIZE) -> list[str]:
    """The first `size` distinct questions (after stripping; empty ones skipped), as the reference builds a bank."""
    bank: list[str] = []
    for question in questions:
        if len(bank) >= size:
            break
        text = question.strip()
        if text and text not in bank:
            bank.append(text)
    return bank
