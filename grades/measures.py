"""A report's grade measures on its topic's bank, as PrefNugget computes them (no ORM).

With N the bank's size and g the report's grades (a question without one counts 0):

    maxgrade  = max g                      (0 when nothing is graded)
    avggrade  = sum g / N
    coverT    = #(g >= T) / N              for T in 1..5 (the seed's cover4: T = 4)
    coveredT  = #(g >= T)

and every measure is 0 when N = 0. A report graded with its documents has per question g = the report's grade
times its best document's (0-25; 0 below the job's gate), covered at T x 5. A run's score is its mean over every request of the family, a request
without a bank, without the source's grades or without the run's report counting 0 (grades.scoring).
"""

import re
from collections.abc import Sequence

THRESHOLDS = (1, 2, 3, 4, 5)
GRADE_DIGIT = re.compile(r"\b([0-5])\b")
DEFAULT_THRESHOLD = 4  # the seed's cover4
METRICS = ("maxgrade", "avggrade") + tuple(f"cover{t}" for t in THRESHOLDS) + tuple(f"covered{t}" for t in THRESHOLDS)


def threshold_metrics(threshold: int) -> tuple[str, ...]:
    """The measures a leaderboard of one grade threshold shows."""
    return ("maxgrade", "avggrade", f"cover{threshold}", f"covered{threshold}")


def grade_read(value: str) -> int:
    """A grade field's grade as the reference reads it: its first digit 0-5 standing as a word of its own; 0
    when there is none."""
    found = GRADE_DIGIT.search(value)
    return int(found.group(1)) if found else 0


def report_measures(grades: Sequence[int], bank_size: int, *, scale: int = 1) -> dict[str, float]:
    """`scale` 5: grades of a report with its documents (0-25, the report's grade times its best document's),
    covered at T x 5, as the reference counts them (`compute_nugget_aggregates_combined`)."""
    if bank_size <= 0:
        return dict.fromkeys(METRICS, 0.0)
    measures = {"maxgrade": float(max(grades, default=0)), "avggrade": sum(grades) / bank_size}
    for threshold in THRESHOLDS:
        covered = sum(1 for grade in grades if grade >= threshold * scale)
        measures[f"cover{threshold}"] = covered / bank_size
        measures[f"covered{threshold}"] = float(covered)
    return measures
