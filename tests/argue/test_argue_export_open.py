"""The ARGUE-style export holds submitted work only (a report is recorded as judged when its topic is submitted),
and says what it left out: `export_argue` on standard error, the download in `X-Open-Work`, the leaderboard
beside the download's link, as the nugget exports do (tests/nuggets/test_export_open_lists.py)."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from argue.judging import argue_work_give
from assessor.models import Topic
from assessor.work.roles import Role
from tests.argue.pages import SCRIPT, client_for, judge_all
from tests.builders import make_user

pytestmark = pytest.mark.django_db

LEFT_OUT = (
    "ARGUE-style judging into 'people' is still open on 1 topic(s) (t2): left out of the export until it is submitted."
)


@pytest.fixture
def half_submitted(argue_collection):
    """People's judging of t1 submitted, of t2 answered but not submitted; returns t2's work."""
    organizer = make_user(Role.ORGANIZER)
    works = {
        topic: argue_work_give(topic=Topic.objects.get(pk=topic), assessor=make_user(Role.ASSESSOR), by=organizer)
        for topic in ("t1", "t2")
    }
    # t1: A's first sentence asks d1, d3, Ann, May, June; its second d2, Bob. t2: A's sentence asks d4, purr.
    for topic, labels in (("t1", [["yes"] * 5, ["no"] * 2]), ("t2", [["yes", "yes"]])):
        client = client_for(works[topic].assessor)
        judge_all(client, works[topic], labels)
    submit(works["t1"])
    return works["t2"]


def submit(work) -> None:
    work.refresh_from_db()
    response = client_for(work.assessor).post(
        reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT
    )
    assert response.status_code == 200, response.content


def exported() -> tuple[list[tuple[str, str]], str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("export_argue", "--name", "people", stdout=out, stderr=err)
    return [(r["run_id"], r["topic_id"]) for r in map(json.loads, out.getvalue().splitlines())], err.getvalue()


def test_the_command_leaves_open_work_out_and_says_so(half_submitted):
    reports, warnings = exported()
    assert reports == [("A", "t1"), ("B", "t1")]
    assert warnings == f"warning: {LEFT_OUT}\n"
    submit(half_submitted)
    reports, warnings = exported()
    assert reports == [("A", "t1"), ("A", "t2"), ("B", "t1")] and warnings == ""


def test_the_download_names_what_it_left_out_and_the_leaderboard_says_it_beside_the_link(client, half_submitted):
    client.force_login(make_user(Role.ORGANIZER))
    url = reverse("collection:download_argue_judgments", args=["people"])
    download = client.get(url)
    lines = b"".join(download.streaming_content).decode().splitlines()
    assert [(r["run_id"], r["topic_id"]) for r in map(json.loads, lines)] == [("A", "t1"), ("B", "t1")]
    assert download["X-Open-Work"] == LEFT_OUT
    page = client.get(reverse("collection:argue_leaderboard"), {"source": "people"}).content.decode()
    # The scores' note above the table, the export's beside the link.
    assert "<li>ARGUE-style judging into &#x27;people&#x27; is still open on 1 topic(s) (t2): not counted.</li>" in page
    assert (
        f'<a href="{url}">download the judgments (JSONL)</a> <span class="download-note">(ARGUE-style judging into '
        "&#x27;people&#x27; is still open on 1 topic(s) (t2): left out of the export until it is submitted.)</span>"
    ) in page
    submit(half_submitted)
    assert "X-Open-Work" not in client.get(url)  # everything is final: nothing to say
    page = client.get(reverse("collection:argue_leaderboard"), {"source": "people"}).content.decode()
    assert f'<a href="{url}">download the judgments (JSONL)</a></p>' in page and 'id="source-notes"' not in page
