"""The kiddie collection imported, and a question bank on two of its requests."""

import pytest

from nuggets.banks import Question, bank_store
from reports.importing import reports_import, requests_import
from tests.builders import make_batch, source_of
from tests.crucible.bank import BANK
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS


@pytest.fixture
def kiddie():
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)


@pytest.fixture
def bank(kiddie) -> str:
    """A bank named "people-bank" of two questions on `leaf` and on `bee`, as a file would bring it."""
    source = source_of("nuggets", "people-bank")
    batch = make_batch(kind="question_bank")
    for topic_id, questions in BANK.items():
        bank_store(
            topic_id=topic_id,
            name="people-bank",
            questions=[Question(text=text) for text in questions],
            source=source,
            imported_from=batch,
        )
    return "people-bank"
