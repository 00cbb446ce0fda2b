"""Fixtures of the meta-evaluation tests."""

import pytest

from assessor.work.roles import Role
from tests.builders import make_user
from tests.metaeval.builders import build_conditions, build_support


@pytest.fixture
def conditions(db) -> dict:
    """Two assignment conditions (auto_edit/manual and auto_edit/auto) over two topics and three runs."""
    return build_conditions()


@pytest.fixture
def support_methods(db) -> None:
    """Two support methods (scratch and auto) on the first citations of two runs' answers."""
    build_support()


@pytest.fixture
def organizer_client(client):
    client.force_login(make_user(Role.ORGANIZER))
    return client
