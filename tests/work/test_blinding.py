"""Blinding: nothing an LLM made, and no run name, reaches an assessor's browser.

LLM output is planted in the database for the topic (AutoAssign labels on the
assessor's own nuggets, an AutoNuggets set, automatic support labels) and
every response the assessor's pages receive is searched for it: the pages,
every answer, the JSON of each save, the submit, the pages after the submit.
"""

import re

import pytest
from django.test import Client
from django.urls import NoReverseMatch, reverse

from assessor.models import AssessorWork, Citation
from support import kinds as support_kinds
from tests.scenarios import Recorder, give_assign, give_support

pytestmark = pytest.mark.django_db

SCRIPT = {"HTTP_ACCEPT": "application/json"}  # how the page's script asks for JSON


def pressed_values(body: str) -> list[str]:
    """The values of the label buttons shown as chosen."""
    return re.findall(r'value="([^"]+)"[^>]*aria-pressed="true"', body)


def test_manual_assign_pages_show_no_llm_output_and_no_run(settings, scenario):
    work = give_assign(scenario)
    browser = Recorder(scenario.assessor)
    browser.get("/")
    page = browser.get(reverse("judge:assign", args=[work.pk]))
    assert page.status_code == 200
    for number in (1, 2, 3):
        body = browser.get(reverse("judge:answer", args=[work.pk, number])).content.decode()
        # The planted AutoAssign labels (all partial_support) are not pre-selected, nor anything else.
        assert pressed_values(body) == []
        assert "Exampleton" in body  # the answer itself is there
    for number in (1, 2, 3):
        for nugget in scenario.nuggets:
            response = browser.post(
                reverse("judge:label", args=[work.pk, number]),
                {"nugget": nugget.pk, "label": "support", "previous": "", "version": work.version},
                **SCRIPT,
            )
            # The answer carries the assessor's own label and the work's state, nothing else.
            answer = response.json()
            assert response.status_code == 200 and answer["label"] == "support"
            assert set(answer) == {"label", "status", "time"} and answer["status"] == "in progress"
    body = browser.get(reverse("judge:answer", args=[work.pk, 2])).content.decode()
    assert pressed_values(body) == ["support"] * 3
    # A conflict's answer carries only the assessor's own label.
    conflict = browser.post(
        reverse("judge:label", args=[work.pk, 1]),
        {"nugget": scenario.nuggets[0].pk, "label": "not_support", "previous": "", "version": work.version},
        **SCRIPT,
    )
    assert conflict.status_code == 409 and conflict.json()["current"] == "support"
    submitted = browser.post(reverse("judge:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    assert submitted.status_code == 200
    browser.get(reverse("judge:answer", args=[work.pk, 1]))
    browser.assert_blind(scenario.forbidden())


def judge_all_pairs(browser: Recorder, work: AssessorWork, label: str) -> None:
    for number in (1, 2, 3):
        body = browser.get(reverse("support:answer", args=[work.pk, number])).content.decode()
        for sentence in sorted(set(re.findall(r'name="sentence" value="(\d+)"', body))):
            response = browser.post(
                reverse("support:label", args=[work.pk, number]),
                {"sentence": sentence, "label": label, "previous": "", "version": work.version},
                **SCRIPT,
            )
            assert response.status_code == 200, response.content


def test_support_from_scratch_pages_show_no_llm_label_and_no_run(scenario):
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    browser = Recorder(scenario.assessor)
    browser.get("/")
    for number in (1, 2, 3):
        body = browser.get(reverse("support:answer", args=[work.pk, number])).content.decode()
        assert pressed_values(body) == []
        assert "Suggested" not in body and "data-shown" not in body and " shown" not in body
        # The passage text is there, beside the sentence.
        assert "Exampleton" in body
    judge_all_pairs(browser, work, "2")
    body = browser.get(reverse("support:answer", args=[work.pk, 1])).content.decode()
    assert set(pressed_values(body)) == {"2"}
    assert (
        browser.post(reverse("support:submit", args=[work.pk]), {"version": work.version}, **SCRIPT).status_code == 200
    )
    browser.assert_blind(scenario.forbidden())


def test_post_editing_shows_the_llm_label_but_not_its_name_nor_the_runs(scenario):
    work = give_support(scenario, support_kinds.SUPPORT_POSTEDIT)
    browser = Recorder(scenario.assessor)
    body = browser.get(reverse("support:judge", args=[work.pk])).content.decode()
    # The planted LLM label (PS = 1) is shown and pre-selected, not yet the assessor's.
    assert 'data-shown="1"' in body and "Suggested label pre-selected" in body
    assert pressed_values(body) == []
    judge_all_pairs(browser, work, "2")
    browser.assert_blind(scenario.forbidden())


def test_missing_text_pairs_are_not_shown_as_empty_but_listed_for_the_organizer(scenario):
    work = give_support(scenario, support_kinds.SUPPORT_SCRATCH)
    browser = Recorder(scenario.assessor)
    bodies = [browser.get(reverse("support:answer", args=[work.pk, n])).content.decode() for n in (1, 2, 3)]
    assert scenario.missing_segment_id not in "".join(bodies)
    pair_counts = sorted(len(set(re.findall(r'name="sentence" value="(\d+)"', body))) for body in bodies)
    assert pair_counts == [1, 2, 2]
    organizer = Client()
    organizer.force_login(scenario.organizer)
    page = organizer.get(reverse("support:organize")).content.decode()
    missing = Citation.objects.get(segment_id=scenario.missing_segment_id)
    assert scenario.missing_segment_id in page and missing.sentence.answer.run.run_id in page


# Pages that show runs or LLM output (the collection, leaderboards, LLM jobs,
# meta-evaluation, organizers' work pages): closed to assessors. Names that do
# not exist in this version are skipped.
STAFF_PAGES = [
    "collection:topics",
    "collection:runs",
    "collection:leaderboards",
    "collection:upload",
    "assignment:leaderboard",
    "jobs:list",
    "metaeval:index",
    "nuggets:organize",
    "judge:organize",
    "support:organize",
]


def test_pages_with_runs_or_llm_output_are_closed_to_assessors(scenario):
    browser = Recorder(scenario.assessor)
    checked = 0
    for name in STAFF_PAGES:
        try:
            url = reverse(name)
        except NoReverseMatch:
            continue
        response = browser.client.get(url)
        assert response.status_code == 403, f"{name} answered an assessor with {response.status_code}"
        browser._keep(url, response)
        checked += 1
    assert checked >= 3
    browser.assert_blind(scenario.forbidden())
