"""The kiddie collection imported: five requests, four runs' reports."""

import pytest

from reports.importing import reports_import, requests_import
from tests.reports.kiddie import KIDDIE_RUNS, KIDDIE_TOPICS


@pytest.fixture
def kiddie():
    requests_import(path=KIDDIE_TOPICS)
    for path in KIDDIE_RUNS:
        reports_import(path=path)
