"""The kiddie preferences the fake model gives, computed from the kiddie files by its rule written again here."""

import json
import re

from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

RUNS = ["run1", "run2", "run3", "run4"]
# Four reports a topic: each is compared with every other, in this order (tests/preferences/test_sampling.py).
PAIRS = [("run1", "run2"), ("run1", "run3"), ("run1", "run4"), ("run2", "run3"), ("run2", "run4"), ("run3", "run4")]


def long_words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z0-9']+", text) if len(word) >= 4}


def expected_labels(*, must_decide: bool = False) -> dict[tuple[str, str, str], int]:
    """The fake model's rule, computed from the kiddie files: more of the request's words is better."""
    requests = {r["request_id"]: r for r in map(json.loads, KIDDIE_TOPICS.read_text().splitlines())}
    reports = {}
    for path in KIDDIE_RUNS:
        for report in map(json.loads, path.read_text().splitlines()):
            text = " ".join(sentence["text"] for sentence in report["responses"])
            reports[(report["metadata"]["topic_id"], report["metadata"]["run_id"])] = text
    labels = {}
    for topic_id, request in requests.items():
        asked = long_words(request["title"] + " " + request["problem_statement"])
        for first, second in PAIRS:
            a, b = (len(asked & long_words(reports[(topic_id, run)])) for run in (first, second))
            labels[(topic_id, first, second)] = 1 if a > b else 2 if b > a else (1 if must_decide else 0)
    return labels
