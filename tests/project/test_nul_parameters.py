"""A NUL character in a query string, a form or an address is a 400, never a 500.

PostgreSQL refuses NUL in a text parameter, so a page that looks up what the
request names (a source, a method, a nugget list, a topic) failed there with a
server error. The pages keep the scenario's data, so that each looks its
parameter up; run on SQLite and on PostgreSQL (DATABASE_URL=postgres://...).
"""

import pytest
from django.urls import reverse

from assessor.project.nul import REFUSAL

pytestmark = pytest.mark.django_db

# (page, its query parameters): every leaderboard and a sample of the other pages that read one.
PAGES = [
    ("collection:grade_leaderboard", {"source": "\x00"}),
    ("collection:argue_leaderboard", {"source": "\x00"}),
    ("collection:borda_leaderboard", {"source": "\x00"}),
    ("assignment:leaderboard", {"nuggets": "\x00"}),
    ("assignment:leaderboard", {"nuggets": "auto", "assigner": "\x00"}),
    ("collection:support_leaderboard", {"method": "\x00"}),
    ("collection:leaderboards", {"source": "\x00"}),
    ("collection:runs", {"sort": "\x00"}),
    ("collection:topics", {"source": "x\x00y"}),
    ("metaeval:index", {"a": "\x00", "b": "\x00"}),
    ("jobs:list", {"\x00": "1"}),
]
PAGE_IDS = [f"{name}-{'-'.join(params)}" for name, params in PAGES]


@pytest.mark.parametrize(("name", "params"), PAGES, ids=PAGE_IDS)
def test_a_nul_in_a_query_parameter_is_a_400(organizer, scenario, name, params):
    response = organizer.get(reverse(name), params)
    assert response.status_code == 400
    assert response.content.decode() == REFUSAL


@pytest.mark.parametrize("name", sorted({name for name, _ in PAGES}))
def test_the_pages_answer_without_a_nul(organizer, scenario, name):
    assert organizer.get(reverse(name)).status_code == 200


def test_a_nul_in_an_address_is_a_400(organizer, scenario):
    for address in (f"/collection/topics/{scenario.topic.pk}%00/", "/collection/runs/team%00run"):
        response = organizer.get(address)
        assert response.status_code == 400
        assert response.content.decode() == REFUSAL


def test_a_nul_in_a_posted_form_is_a_400_and_logs_nobody_in(client, scenario):
    response = client.post(reverse("login"), {"username": "organizer\x00", "password": "pw"})
    assert response.status_code == 400
    assert response.content.decode() == REFUSAL
    assert "_auth_user_id" not in client.session
