"""Nugget exports hold final lists only: a list being edited (never submitted, or reopened) is left out and said
so, unless open work is included, when it is written and said to be provisional."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from assessor.work.roles import Role
from nuggets.models import NuggetSet
from tests.builders import make_nugget_set, make_topic, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_lists():
    """Topic 1's list is submitted, topic 2's was never submitted, topic 3's was reopened."""
    for number, status in ((1, NuggetSet.Status.SUBMITTED), (2, NuggetSet.Status.OPEN), (3, NuggetSet.Status.OPEN)):
        nugget_set = make_nugget_set(
            make_topic(f"2024-{number}"), texts=[f"fact of topic {number}"], kind="manual", name="manual"
        )
        NuggetSet.objects.filter(pk=nugget_set.pk).update(status=status)


def exported(*options: str) -> tuple[list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("export_nuggets", "--nuggets", "manual", *options, stdout=out, stderr=err)
    return [json.loads(line)["qid"] for line in out.getvalue().splitlines()], err.getvalue()


def test_the_command_leaves_open_lists_out_and_says_so(three_lists):
    topics, warnings = exported()
    assert topics == ["2024-1"]
    assert "warning: 2 list(s) named 'manual' are still open (2024-2, 2024-3): left out of the export." in warnings


def test_the_command_writes_open_lists_with_include_open_as_provisional(three_lists):
    topics, warnings = exported("--include-open")
    assert topics == ["2024-1", "2024-2", "2024-3"]
    assert "(2024-2, 2024-3): exported as they stand, provisional." in warnings


def test_a_name_with_only_open_lists_has_nothing_final_to_export(three_lists):
    NuggetSet.objects.filter(topic_id="2024-1").update(status=NuggetSet.Status.OPEN)
    with pytest.raises(CommandError, match="all still open"):
        exported()


def test_the_download_follows_the_open_work_switch(client, three_lists):
    client.force_login(make_user(Role.ORGANIZER))
    url = reverse("collection:download_nuggets", args=["manual"])

    def qids(response) -> list[str]:
        return [json.loads(line)["qid"] for line in b"".join(response.streaming_content).decode().splitlines()]

    final = client.get(url)
    assert qids(final) == ["2024-1"]
    # What it left out, as export_nuggets warns of it.
    assert final["X-Open-Lists"] == "2 list(s) named 'manual' are still open (2024-2, 2024-3): left out of the export."
    provisional = client.get(url, {"open": "1"})
    assert qids(provisional) == ["2024-1", "2024-2", "2024-3"]
    assert (
        provisional["X-Open-Lists"]
        == "2 list(s) named 'manual' are still open (2024-2, 2024-3): exported as they stand, provisional."
    )
    NuggetSet.objects.update(status=NuggetSet.Status.SUBMITTED)
    every = client.get(url)
    assert qids(every) == ["2024-1", "2024-2", "2024-3"]
    assert "X-Open-Lists" not in every  # every list is final: nothing to say


def test_the_topic_page_says_what_the_nugget_download_leaves_out(client, three_lists):
    client.force_login(make_user(Role.ORGANIZER))
    download = reverse("collection:download_nuggets", args=["manual"])
    page = client.get(reverse("collection:topic", args=["2024-1"])).content.decode()
    assert (
        f'<a href="{download}">download all “manual” nuggets</a> <span class="download-note">(2 list(s) named '
        "&#x27;manual&#x27; are still open (2024-2, 2024-3): left out of the export.)</span>"
    ) in page
    page = client.get(reverse("collection:topic", args=["2024-1"]), {"open": "1"}).content.decode()
    assert (
        f'<a href="{download}?open=1">download all “manual” nuggets</a> <span class="download-note">(2 list(s) '
        "named &#x27;manual&#x27; are still open (2024-2, 2024-3): exported as they stand, provisional.)</span>"
    ) in page
    NuggetSet.objects.update(status=NuggetSet.Status.SUBMITTED)
    page = client.get(reverse("collection:topic", args=["2024-1"])).content.decode()
    assert f'<a href="{download}">download all “manual” nuggets</a></p>' in page
