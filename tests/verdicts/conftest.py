"""Fixtures of the verdict tests: the small collection of tests/verdicts/collection.py."""

import pytest

from tests.verdicts.collection import make_verdict_collection


@pytest.fixture
def verdict_collection(db):
    return make_verdict_collection()
