"""The kiddie collection imported (five requests, four runs' reports) and a file's preferences on it."""

import pytest

from preferences.kinds import IMPORT_PREFERENCES
from preferences.models import PreferenceLabel
from preferences.pairs import planned_pairs
from reports.importing import reports_import, requests_import
from tests.builders import make_batch, source_of
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS

KIDDIE_TOPIC_IDS = ["bee", "cloud", "earthworms", "hibernation", "leaf"]


@pytest.fixture
def kiddie():
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)


@pytest.fixture
def ranked(kiddie) -> str:
    """A file's preference source on every sampled kiddie pair: the lower run number is better (run1 > run2 >
    run3 > run4 on every topic, the order the reference's golden trace shows). Returns its name."""
    source = source_of("preferences", "ranked")
    batch = make_batch(kind=IMPORT_PREFERENCES, file_name="ranked.preferences.jsonl")
    PreferenceLabel.objects.bulk_create(
        PreferenceLabel(
            source=source,
            topic_id=pair.topic_id,
            first_id=pair.first,
            second_id=pair.second,
            label=1,
            imported_from=batch,
        )
        for pair in planned_pairs(topic_ids=KIDDIE_TOPIC_IDS)
    )
    assert PreferenceLabel.objects.filter(source=source).count() == 30
    return "ranked"
