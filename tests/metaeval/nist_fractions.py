"""NIST's Vstrict scores as exact fractions, read from the assignment file itself, for the tests to check the
app's run means against."""

import json
from fractions import Fraction
from pathlib import Path


def vstrict_fractions(path: Path) -> dict[tuple[str, str], Fraction]:
    """(run, topic) -> Vstrict as a fraction: the vital nuggets NIST marked support over the vital nuggets."""
    scores = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            vital = [nugget for nugget in record["nuggets"] if nugget["importance"] == "vital"]
            supported = sum(nugget["assignment"] == "support" for nugget in vital)
            scores[(record["run_id"], record["qid"])] = Fraction(supported, len(vital)) if vital else Fraction(0)
    return scores
