"""The reference's golden traces on the kiddie collection (tests/prefnugget/fixtures), as the job tests read
them: the calls' sections, the answers that replay the reference's lists of questions, an answer's layout."""

import json
import re
from pathlib import Path

FIXTURES = Path(__file__).with_name("fixtures")


def section(user: str, name: str) -> str:
    found = re.search(rf"\[\[ ## {name} ## \]\]\n(.*?)\n\n(?:\[\[ ## |Respond with)", user, re.DOTALL)
    assert found is not None, name
    return found.group(1)


def extraction(questions: list[str]) -> str:
    return (
        "[[ ## reasoning ## ]]\nr\n\n[[ ## differentiating_questions ## ]]\n"
        f"{json.dumps(questions)}\n\n[[ ## confidence ## ]]\n0.5\n\n[[ ## completed ## ]]"
    )


def reference_calls(fixture: str) -> tuple[str, dict[str, list[str]]]:
    """A golden trace's system message and, per request title, its user messages in the order sent."""
    lines = [json.loads(line) for line in (FIXTURES / fixture).read_text().splitlines()]
    by_title: dict[str, list[str]] = {}
    for line in lines[1:]:
        by_title.setdefault(section(line["user"], "query_title"), []).append(line["user"])
    return lines[0]["system"], by_title


def answers_replaying(calls: list[str]) -> list[list[str]]:
    """Answers that make the reference's next lists: what each batch's list adds, two questions per call."""
    given = [json.loads(section(user, "given_exam_questions")) for user in calls]
    answers: list[list[str]] = []
    for batch in range(0, len(calls), 2):
        now, after = given[batch], (given[batch + 2] if batch + 2 < len(calls) else given[batch])
        added = after[len(now) :]
        assert after[: len(now)] == now and len(added) <= 4
        answers += [added[:2], added[2:4]]
    return answers
