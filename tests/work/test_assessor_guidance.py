"""What the assessors' pages tell them: the guidelines, the organizers' notes, the keys, the queue, what comes next."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from assessor.models import AssessorWork, WorkEvent
from assessor.work.queue import queue_items
from assessor.work.roles import Role
from assignment.judging import assign_submit, assign_work_give, assignment_label_save
from nuggets.services import nugget_operation_apply, nugget_set_submit
from support import kinds as support_kinds
from support.services import support_work_give
from tests.builders import make_qrel, make_segment, make_user
from tests.scenarios import give_assign, give_support, make_given_topic, make_scenario, nugget_set_of

pytestmark = pytest.mark.django_db


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_of(user, url: str) -> str:
    response = client_for(user).get(url, follow=True)
    assert response.status_code == 200, url
    return response.content.decode()


def guidelines(html: str) -> str:
    """The text of the guidelines section (inside the help dialog), tags dropped."""
    match = re.search(r'<section id="guidelines".*?</section>', html, re.S)
    assert match, "no guidelines on the page"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(0)))


def label(work: AssessorWork, scenario, *, answers: int, nuggets: int = 3) -> None:
    """Label the first nuggets of the first answers (in the assessor's order) as the page would."""
    for number in range(1, answers + 1):
        for nugget in scenario.nuggets[:nuggets]:
            work.refresh_from_db()
            assignment_label_save(
                work_id=work.pk, user=work.assessor, number=number, nugget_id=nugget.pk, label="support",
                previous="", expected_version=work.version,
            )  # fmt: skip
    work.refresh_from_db()


# --- guidelines and notes ---------------------------------------------------------------------


def test_each_page_defines_its_labels_in_the_help_dialog(scenario):
    assign = give_assign(scenario)
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    nuggets = make_given_topic(condition="manual")

    text = guidelines(page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk])))
    assert "support s The answer fully states the nugget's fact." in text
    assert "partial p The answer states part of the fact, or only implies it." in text
    assert "not support n The fact is not in the answer." in text

    text = guidelines(page_of(scenario.assessor, reverse("support:judge", args=[support.pk])))
    assert "FS full support s The passage states everything the sentence says." in text
    assert "PS partial support p The passage supports part of the sentence" in text
    assert "NS no support n The passage supports no part of the sentence." in text

    html = page_of(nuggets.assessor, reverse("nuggets:work", args=[nuggets.pk]))
    text = guidelines(html)
    assert "vital A fact a good answer must contain." in text
    assert "okay Worth having in an answer, but not essential." in text
    # The guidelines sit in the help dialog, which h opens (the help says so).
    assert html.index('<dialog id="help"') < html.index('<section id="guidelines"')
    assert "<kbd>h</kbd>" in html


def test_an_organizer_writes_notes_the_assessor_reads_in_the_guidelines(scenario):
    assign = give_assign(scenario)
    work_page = reverse("judge:organize_work", args=[assign.pk])
    organizer = client_for(scenario.organizer)
    assert 'name="notes"' in organizer.get(work_page).content.decode()

    response = organizer.post(
        reverse("work_notes", args=[assign.pk]),
        {"notes": "  Count a year range as the date.\nIgnore typos. ", "next": work_page},
    )
    assert response.status_code == 302 and response["Location"] == work_page
    assign.refresh_from_db()
    assert assign.notes == "Count a year range as the date.\nIgnore typos."
    assert assign.version == 0  # an open page's saves still count
    assert WorkEvent.objects.filter(work=assign, action="notes").count() == 1
    assert "Count a year range as the date." in organizer.get(work_page).content.decode()

    text = guidelines(page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk])))
    assert "Notes from the organizers Count a year range as the date. Ignore typos." in text


def test_every_organizer_work_page_has_the_notes_form(scenario):
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    nuggets = make_given_topic(condition="manual", organizer=scenario.organizer)
    organizer = client_for(scenario.organizer)
    pages = [
        (reverse("support:organize_work", args=[support.pk]), support),
        (reverse("nuggets:organize_topic", args=[nuggets.topic_id]), nuggets),
    ]
    for url, work in pages:
        html = organizer.get(url).content.decode()
        assert f'action="{reverse("work_notes", args=[work.pk])}"' in html, url


def test_only_organizers_write_notes_and_only_back_to_this_site(scenario):
    assign = give_assign(scenario)
    url = reverse("work_notes", args=[assign.pk])
    assert client_for(scenario.assessor).post(url, {"notes": "mine"}).status_code == 403
    assert client_for(make_user(Role.ASSESSOR)).post(url, {"notes": "mine"}).status_code == 403
    response = client_for(scenario.organizer).post(url, {"notes": "ok", "next": "https://elsewhere.example/"})
    assert response["Location"] == reverse("home")
    assign.refresh_from_db()
    assert assign.notes == "ok"


def test_a_page_without_notes_shows_none(scenario):
    assign = give_assign(scenario)
    html = page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    assert 'id="campaign-notes"' not in html


# --- label buttons --------------------------------------------------------------------------------


def test_label_buttons_show_their_key_and_wear_their_tone(scenario):
    assign = give_assign(scenario)
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    html = page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    row = re.search(r'<li class="jrow.*?</li>', html, re.S).group(0)
    buttons = re.findall(
        r'<button type="submit" name="label" value="(\w+)".*?class="([^"]+)".*?>(.*?)</button>', row, re.S
    )
    assert [(value, re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", inner)).strip()) for value, _c, inner in buttons] == [
        ("support", "support s"),
        ("partial_support", "partial p"),
        ("not_support", "not support n"),
    ]
    assert [classes.split()[1] for _v, classes, _i in buttons] == ["tone-yes", "tone-part", "tone-no"]
    assert row.count("<kbd>") == 3

    html = page_of(scenario.assessor, reverse("support:judge", args=[support.pk]))
    row = re.search(r'<li class="jrow.*?</li>', html, re.S).group(0)
    assert re.findall(r'<span class="choice-name">(\w+)</span> <kbd>(\w)</kbd>', row) == [
        ("FS", "s"),
        ("PS", "p"),
        ("NS", "n"),
    ]


# --- finishing ---------------------------------------------------------------------------------------


def test_an_open_topic_asks_before_submitting_and_a_frozen_one_links_to_the_next_work(scenario):
    assign = give_assign(scenario)
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    html = page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    assert '<dialog id="submit-confirm"' in html
    assert 'id="all-done" hidden' in html  # no label yet
    assert 'id="after-submit"' not in html

    label(assign, scenario, answers=3)
    html = page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    assert 'id="all-done" hidden' not in html and 'id="all-done"' in html

    assign_submit(work_id=assign.pk, user=scenario.assessor, expected_version=assign.version)
    html = page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    assert '<dialog id="submit-confirm"' not in html
    next_link = re.search(r'<a id="next-work" href="([^"]+)">([^<]+)</a>', html)
    assert next_link.groups() == (
        reverse("support:judge", args=[support.pk]),
        f"Support from scratch of topic {scenario.topic.pk}",
    )
    assert "(0 / 5 pairs)" in html


def test_the_last_open_work_links_back_to_the_queue(scenario):
    assign = give_assign(scenario)
    label(assign, scenario, answers=3)
    assign_submit(work_id=assign.pk, user=scenario.assessor, expected_version=assign.version)
    html = page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    assert re.search(r'<a id="next-work" href="/">Back to your work</a>', html)


# --- the queue ---------------------------------------------------------------------------------------


def test_the_queue_lists_work_in_dependency_order_with_what_is_left_and_one_time_format(scenario):
    assessor = scenario.assessor
    nuggets = make_given_topic(condition="manual", assessor=assessor, organizer=scenario.organizer)
    later = assign_work_give(topic=nuggets.topic, assessor=assessor, by=scenario.organizer)
    assign = give_assign(scenario)
    support = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    label(assign, scenario, answers=1, nuggets=1)
    AssessorWork.objects.filter(pk=assign.pk).update(active_seconds=750)
    AssessorWork.objects.filter(pk=support.pk).update(status=AssessorWork.Status.SUBMITTED, active_seconds=45)

    items = queue_items(user=assessor)
    # Open work first; per topic, the nugget list before the ManualAssign on it; submitted work last.
    expected = sorted(
        [
            (scenario.topic.pk, "assign", assign.pk),
            (nuggets.topic_id, "nuggets", nuggets.pk),
            (nuggets.topic_id, "assign", later.pk),
        ],
        key=lambda row: (row[0], row[1] != "nuggets"),
    ) + [(scenario.topic.pk, "support", support.pk)]
    assert [item.work.pk for item in items] == [pk for _t, _k, pk in expected]

    progress = {item.work.pk: item.progress_label for item in items}
    assert progress[assign.pk] == "1 / 9 labels"  # 3 answers x 3 nuggets
    assert progress[support.pk] == "0 / 5 pairs"  # 2 + 2 + 1 cited sentences with passage text
    assert progress[nuggets.pk] == "0 / 20 nuggets"

    html = page_of(assessor, reverse("home"))
    rows = re.findall(r'<tr data-work="(\d+)">(.*?)</tr>', html, re.S)
    assert [int(pk) for pk, _ in rows] == [pk for _t, _k, pk in expected]
    cells = {int(pk): re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "|", body)) for pk, body in rows}
    assert "1 / 9 labels" in cells[assign.pk] and "12 min 30 s" in cells[assign.pk]
    assert "0 / 5 pairs" in cells[support.pk] and "|45 s|" in cells[support.pk]


# --- no implementation detail on the assessor's pages -------------------------------------------------


def test_the_workspace_shows_no_version_and_no_source_button_where_it_cannot_apply(db):
    work = make_given_topic(condition="manual", grades=[2])
    blank = make_segment(text="")
    make_qrel(work.topic, blank, grade=3, source="nist")
    html = page_of(work.assessor, reverse("nuggets:work", args=[work.pk]))
    status = re.search(r'id="set-status">([^<]*)<', html).group(1)
    assert status == "open"
    segments = re.findall(r'<li class="segment".*?</li>', html, re.S)
    assert len(segments) == 1 and "grade 2 passage" in segments[0]
    assert "source of the selected nugget" in segments[0]
    # The segment without text is listed apart, collapsed, with no source button.
    untexted = re.search(r'<details class="untexted" id="untexted-segments">.*?</details>', html, re.S).group(0)
    assert blank.docid in untexted and "source of the selected nugget" not in untexted


def test_a_frozen_list_offers_no_source_button(db):
    work = make_given_topic(condition="manual", grades=[2])
    nugget_operation_apply(
        work_id=work.pk, user=work.assessor, operation="add", params={"text": "a fact", "importance": "vital"},
        expected_version=nugget_set_of(work).version,
    )  # fmt: skip
    nugget_set_submit(work_id=work.pk, user=work.assessor, expected_version=nugget_set_of(work).version)
    html = page_of(work.assessor, reverse("nuggets:work", args=[work.pk]))
    assert "submitted · frozen" in html
    assert "source of the selected nugget" not in html


def test_the_judging_help_is_a_plain_dialog_the_browser_centres(scenario):
    assign = give_assign(scenario)
    html = page_of(scenario.assessor, reverse("judge:assign", args=[assign.pk]))
    # The .panel class gives a margin that pushes a modal dialog down; the help has none.
    assert '<dialog id="help" class="help">' in html


def test_the_queue_costs_the_same_queries_for_one_topic_or_three():
    def queries_for(assessor) -> int:
        client = client_for(assessor)
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("home")).status_code == 200
        return len(captured)

    one = make_scenario()
    give_assign(one)
    give_support(one, support_kinds.SUPPORT_SCRATCH)
    make_given_topic(condition="manual", assessor=one.assessor, organizer=one.organizer)
    baseline = queries_for(one.assessor)
    for _ in range(2):
        more = make_given_topic(condition="manual", assessor=one.assessor, organizer=one.organizer)
        assign_work_give(topic=more.topic, assessor=one.assessor, by=one.organizer)
        support_work_give(
            topic=more.topic, assessor=one.assessor, kind=support_kinds.SUPPORT_SCRATCH, by=one.organizer
        )
    assert queries_for(one.assessor) == baseline
