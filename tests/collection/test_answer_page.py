"""One answer through every judge's eyes: the page shows each source's label of each item with its provenance and an
LLM's reasoning, and marks exactly the items two sources label differently (tests/collection/answer_judges.py
lists the labels; the marked rows below are worked out from that list by hand)."""

import re
from html import unescape

import pytest
from django.urls import reverse

from assessor.models import Job
from assessor.scoring.kept import scores_refresh
from assessor.work.roles import Role
from assignment.selectors import FAMILY as CONDITIONS
from tests.builders import make_answer, make_run, make_topic, make_user
from tests.collection.answer_judges import FIRST_SENTENCE, GPT_REASONING, judged_answer

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr id="(?P<id>[^"]+)"(?P<differs> class="differs")?>(?P<body>.*?)</tr>', re.S)
CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)


def _text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def rows_of(page: str, prefix: str) -> dict[str, tuple[bool, list[str]]]:
    """The label rows whose id starts with `prefix`: {item text: (marked, [each cell's text])}."""
    found = {}
    for match in ROW.finditer(page):
        if match["id"].startswith(prefix):
            cells = [_text(cell) for cell in CELL.findall(match["body"])]
            item = cells[0].removeprefix("≠ ")
            found[item] = (bool(match["differs"]), cells[1:])
    return found


def marked(rows: dict[str, tuple[bool, list[str]]]) -> set[str]:
    return {item for item, (differs, _) in rows.items() if differs}


@pytest.fixture
def page(organizer):
    judged = judged_answer()
    response = organizer.get(reverse("collection:answer", args=[judged.answer.pk]))
    assert response.status_code == 200
    return judged, response.content.decode()


def test_nugget_assignment_rows_mark_the_nuggets_assigners_label_differently(page):
    _, html = page
    rows = rows_of(html, "assign-auto_edit-")
    # The sources' columns in the order of their names: alice, gpt, nist.
    assert set(rows) == {"cause nugget 1, vital", "date nugget 2, vital", "place nugget 3, vital",
                         "third point nugget 4, vital"}  # fmt: skip
    assert marked(rows) == {"date nugget 2, vital", "third point nugget 4, vital"}
    differs, cells = rows["date nugget 2, vital"]
    assert cells[0].startswith("not_support") and "alice (12 s)" in cells[0]
    assert cells[1].startswith("support") and "job " in cells[1]
    assert cells[2] == "—"
    assert "file nist-labels.jsonl" in rows["cause nugget 1, vital"][1][2]


def test_support_rows_mark_the_citations_methods_label_differently_and_their_sentence(page):
    _, html = page
    rows = rows_of(html, "support-")
    assert len(rows) == 4  # every citation some method judged: s0, s1 (two), s2
    marked_rows = marked(rows)
    assert len(marked_rows) == 1
    (item,) = marked_rows
    assert item.startswith("sentence 1, citation 1")
    s2 = next(cells for text, (_, cells) in rows.items() if text.startswith("sentence 2"))
    assert s2[1].startswith("PS") and s2[2].startswith("unjudged")  # unjudged disagrees with no one
    # The answer's text marks the sentence of the disagreeing citation, and only it.
    sentences = re.findall(r'<li id="sentence-(\d)"( class="differs")?>', html)
    assert sentences == [("0", ""), ("1", ' class="differs"'), ("2", "")]
    assert FIRST_SENTENCE in html


def test_grade_rows_show_the_llm_reasoning_and_mark_the_question_graded_differently(page):
    _, html = page
    rows = rows_of(html, "grades-bank1-")
    assert marked(rows) == {"What caused it? question 1"}
    _, cells = rows["What caused it? question 1"]
    assert cells[0].startswith("4") and cells[1].startswith("5") and GPT_REASONING in cells[1]
    assert rows["When was it? question 2"][0] is False


def test_preference_rows_read_each_pair_from_this_reports_side(page):
    judged, html = page
    rows = rows_of(html, "preferences-")
    # b: alice shown (this, b) first better, gpt shown (b, this) second better: this better both times.
    assert rows["against other.b"] == (False, [rows["against other.b"][1][0], rows["against other.b"][1][1], "—"])
    assert rows["against other.b"][1][0].startswith("this better shown first")
    assert rows["against other.b"][1][1].startswith("this better shown second")
    assert marked(rows) == {"against other.c"}
    other_b = reverse("collection:answer", args=[judged.others["other.b"].pk])
    assert f'href="{other_b}"' in html


def test_columns_say_who_stands_behind_each_source(page):
    judged, html = page
    assert "people&#x27;s work" in html  # alice: a person's source
    assert f"the LLM gpt-4o, job {judged.judges.job.pk}" in html  # the source names no endpoint
    assert "the file nist-labels.jsonl" in html


def test_argue_section_links_to_its_own_report_page(page):
    judged, html = page
    assert reverse("argue:report") + "?source=nist&amp;run=team.a&amp;topic=2024-77" in html


def test_the_list_of_disagreements_links_each_marked_row(page):
    _, html = page
    summary = html.split('id="answer-disagreements"', 1)[1].split("</section>", 1)[0]
    links = re.findall(r'class="disagreement-link" href="#([^"]+)"', summary)
    marked_ids = [match["id"] for match in ROW.finditer(html) if match["differs"]]
    # 2 nuggets, 1 citation, 1 question, 1 pair.
    assert len(marked_ids) == 5
    assert sorted(links) == sorted(marked_ids)


def test_the_run_page_links_to_each_answer_page(organizer):
    judged = judged_answer()
    scores_refresh(family=CONDITIONS, columns=("auto_edit", "alice"), topics=[judged.answer.topic_id])
    page = organizer.get(reverse("collection:run", args=["team.a"])).content.decode()
    url = reverse("collection:answer", args=[judged.answer.pk])
    answers_table = page.split("<h2>Answers</h2>", 1)[1]
    assert f'<td class="answer-link"><a href="{url}">labels by source</a></td>' in answers_table
    # The condition's per-topic row of the topic links to the answer too.
    scores = page.split("<h2>Scores per topic</h2>", 1)[1].split("<h2>Answers</h2>", 1)[0]
    assert f'<td class="num">11</td><td><a class="small answer-link" href="{url}">labels</a></td></tr>' in scores


def test_an_assessor_cannot_open_an_answer_page(client):
    judged = judged_answer()
    client.force_login(make_user(Role.ASSESSOR))
    response = client.get(reverse("collection:answer", args=[judged.answer.pk]))
    assert response.status_code == 403
    assert "alice" not in response.content.decode() and GPT_REASONING not in response.content.decode()


def test_an_answer_without_labels_says_so(organizer):
    answer = make_answer(make_run("lonely"), make_topic("2024-9"))
    html = organizer.get(reverse("collection:answer", args=[answer.pk])).content.decode()
    assert "No source has labelled this answer yet." in html
    assert 'class="differs"' not in html


def test_labels_of_a_job_still_running_are_marked_provisional(organizer):
    judged = judged_answer()
    judged.judges.job.status = Job.Status.RUNNING
    judged.judges.job.save(update_fields=["status"])
    html = organizer.get(reverse("collection:answer", args=[judged.answer.pk])).content.decode()
    rows = rows_of(html, "assign-auto_edit-")
    _, cells = rows["date nugget 2, vital"]
    # gpt's label is its job's (running): provisional; alice's (no open work) and the file's are counted.
    assert cells[1].endswith(f"job {judged.judges.job.pk}, provisional")
    assert cells[0].endswith("alice (12 s)")
    assert "provisional" not in rows["cause nugget 1, vital"][1][2]
