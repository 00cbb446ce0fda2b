"""The organizer pages' finish: one name per page, the job page's actions by state, upload wording."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from assessor.models import Job
from assignment import kinds as assignment_kinds
from tests.builders import make_topic

pytestmark = pytest.mark.django_db


def menu(page: str) -> list[str]:
    nav = re.search(r'<nav class="nav" aria-label="Main">(.*?)</nav>', page, re.S)
    assert nav
    return re.findall(r">([^<>]+)</a>", nav.group(1))


def test_the_menu_names_the_work_pages_as_their_headings_do(organizer):
    names = menu(organizer.get("/").content.decode())
    assert names == [
        "Topics", "Runs", "Leaderboards", "Upload", "Nugget work", "ManualAssign", "Support judging",
        "Preferences", "Grading", "ARGUE-style judging", "Jobs", "Meta-evaluation", "Accounts", "Admin",
    ]  # fmt: skip
    assert "<h1>ManualAssign</h1>" in organizer.get(reverse("judge:organize")).content.decode()
    assert "<h1>Support judging</h1>" in organizer.get(reverse("support:organize")).content.decode()
    assert "<h1>Nugget work</h1>" in organizer.get(reverse("nuggets:organize")).content.decode()
    assert "<h1>Preferences</h1>" in organizer.get(reverse("preferences:organize")).content.decode()
    assert "<h1>Grading</h1>" in organizer.get(reverse("grades:organize")).content.decode()
    assert "<h1>ARGUE-style judging</h1>" in organizer.get(reverse("argue:organize")).content.decode()


def test_the_home_page_cards_name_the_pages_as_the_menu_does(organizer):
    """docs/pages.md: the collection's size and a card for each of the menu's destinations, in its order."""
    make_topic("2024-1")
    page = organizer.get("/").content.decode()
    cards = re.findall(r'<a class="card" href="([^"]+)">\s*<strong>([^<]+)</strong>\s*<span>([^<]+)</span>', page)
    assert (reverse("nuggets:organize"), "Nugget work") in [(url, title) for url, title, _ in cards]
    assert (reverse("judge:organize"), "ManualAssign") in [(url, title) for url, title, _ in cards]
    assert (reverse("support:organize"), "Support judging") in [(url, title) for url, title, _ in cards]
    assert [title for _, title, _ in cards] == menu(page)
    assert all(text.strip() for _, _, text in cards)
    assert "1 topic, 0 runs, 0 answers." in page


def job_buttons(organizer, status: str) -> list[str]:
    job = Job.objects.create(kind=assignment_kinds.AUTO_ASSIGN, output_name="auto", params={}, status=status)
    page = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    progress = page.split('id="progress"', 1)[1].split("</section>", 1)[0]
    return [re.sub(r"\s+", " ", text).strip() for text in re.findall(r"<button[^>]*>(.*?)</button>", progress, re.S)]


@pytest.mark.parametrize(
    "status, buttons",
    [
        ("queued", ["Cancel"]),
        ("running", ["Cancel"]),
        ("done", []),
        ("failed", ["Resume"]),
        ("cancelled", ["Resume"]),
    ],
)
def test_the_job_page_offers_only_what_applies_to_the_jobs_state(organizer, status, buttons):
    assert job_buttons(organizer, status) == buttons


def test_the_upload_options_are_titled_in_words(organizer):
    page = organizer.get(reverse("collection:upload")).content.decode()
    legends = re.findall(r'<legend class="small muted">(.*?)</legend>', page)
    assert "Options for qrels" in legends
    assert "Options for nuggets and nugget assignments" in legends
    assert not [legend for legend in legends if ":" in legend]


def test_a_failed_upload_keeps_kind_and_options_and_asks_for_the_file_again(organizer, upload_worker):
    make_topic("2024-1")
    response = organizer.post(
        reverse("collection:upload"),
        {"kind": "qrels", "source": "mine", "file": SimpleUploadedFile("grades.txt", b"2024-1 Q0 doc#1 nine\n")},
        follow=True,
    )
    page = response.content.decode()
    assert "Nothing was imported." in page
    assert '<option value="qrels" selected>' in page
    assert 'value="mine"' in page
    assert "(choose grades.txt again, or another)" in page
