"""The kiddie collection imported, and a question bank `qbank` on two of its requests (from a file)."""

import pytest

from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS
from reports.importing import reports_import, requests_import
from tests.builders import make_batch, source_of
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

# The kiddie collection's five requests (kiddie-topics.jsonl): a grade source's run means are over all of them,
# a request without a bank counting 0.
KIDDIE_REQUESTS = ["bee", "cloud", "earthworms", "hibernation", "leaf"]

BANK = {
    "leaf": ["Why do some leaves turn red in the fall?", "What pigment makes leaves green?", "Will the tree be okay?"],
    "bee": ["How do bees make honey?", "Do bees sting people?"],
}


def store_bank(name: str, questions: dict[str, list[str]]) -> None:
    batch = make_batch(kind=IMPORT_NUGGETS)
    source = source_of("nuggets", name, imported_from=batch)
    for topic_id, texts in questions.items():
        bank_store(
            topic_id=topic_id,
            name=name,
            questions=[Question(text=text) for text in texts],
            source=source,
            imported_from=batch,
        )


@pytest.fixture
def kiddie():
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)


@pytest.fixture
def qbank(kiddie):
    store_bank("qbank", BANK)
