"""The demo's two campaigns as people meet them: each campaign's pages show its own topics only, a command names
its campaign, and an assessor of both works through one queue grouped by campaign."""

import io
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

TREC, KIDDIE = "trec-2024-rag-demo", "rag4reports-kiddie"
# The demo's files, read by hand: demo/data/topics.tsv and demo/data/kiddie/topics/kiddie-topics.jsonl.
TREC_TOPICS = {"2024-224701", "2024-79154", "2024-214096", "2024-213817"}
KIDDIE_TOPICS = {"leaf", "cloud", "bee", "earthworms", "hibernation"}


@pytest.fixture
def demo() -> None:
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())


def _client(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.get(username=username))
    return client


def _page(client: Client, slug: str, url: str) -> str:
    response = client.get(f"/c/{slug}{url}")
    assert response.status_code == 200, (slug, url, response.status_code)
    return response.content.decode()


def _topics_shown(page: str) -> set[str]:
    return {topic for topic in TREC_TOPICS | KIDDIE_TOPICS if re.search(rf">\s*{re.escape(topic)}\s*<", page)}


def test_each_campaign_s_topics_page_shows_its_own_topics_only(demo):
    organizer = _client("organizer")
    assert _topics_shown(_page(organizer, TREC, reverse("collection:topics"))) == TREC_TOPICS
    assert _topics_shown(_page(organizer, KIDDIE, reverse("collection:topics"))) == KIDDIE_TOPICS


def test_the_organizer_and_both_assessors_reach_both_campaigns(demo):
    for username in ("organizer", "assessor1", "assessor2"):
        client = _client(username)
        for slug in (TREC, KIDDIE):
            assert client.get(f"/c/{slug}/").status_code == 200, (username, slug)


def test_an_assessor_s_queue_lists_the_work_of_both_campaigns_under_their_titles(demo):
    page = _client("assessor1").get(reverse("home")).content.decode()
    trec, kiddie = page.find("TREC 2024 RAG (demo)"), page.find("Rag4Reports kiddie")
    assert 0 <= trec < kiddie, "both campaigns' headings, the first campaign first"
    # assessor1's work: ManualNuggets on 2024-214096 and support on 2024-224701; preferences on bee, a bank on cloud.
    assert {"2024-214096", "2024-224701"} <= _topics_shown(page[trec:kiddie])
    assert _topics_shown(page[kiddie:]) == {"bee", "cloud"}


def test_a_command_names_its_campaign_now_that_there_are_two(demo):
    topics = str(Path(__file__).resolve().parents[2] / "demo" / "data" / "topics.tsv")
    with pytest.raises(CommandError, match="several campaigns"):
        call_command("import_topics", topics, stdout=io.StringIO())
    out = io.StringIO()
    call_command("import_topics", topics, "--campaign", TREC, stdout=out)
    assert "4 lines, 0 created, 4 unchanged" in out.getvalue()
