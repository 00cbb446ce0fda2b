"""One judged report, sentence by sentence: the organizer's page shows each sentence's path through ARGUE's flow
and why, its citations' support, the answers credited, and, beside a second source, the sentences the two judged
differently. On the hand-made collection of tests/argue/flow.py, judged by the fake LLM (its rules worked by hand
in tests/argue/test_argue_flow.py)."""

import re

import pytest
from django.urls import reverse

from argue.llm import argue_job_create
from argue.models import SupportAttestation
from assessor.jobs.engine import job_run_sync
from assessor.models import Run
from assessor.work.roles import Role
from tests.argue.flow import F1_TEXTS, flow_collection_make
from tests.argue.pages import client_for
from tests.builders import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(llm_server, db):
    flow_collection_make()
    job_run_sync(argue_job_create(name="llm", bank="gold", topics=["f1", "f2", "f3"]).pk)


def sentence_rows(page: str) -> dict[int, str]:
    """Sentence number -> its row's HTML."""
    rows = re.findall(r'(<tr id="sentence-(\d+)".*?</tr>)', page, flags=re.S)
    return {int(number): row for row, number in rows}


def report(client, **query) -> str:
    response = client.get(reverse("argue:report"), query)
    assert response.status_code == 200
    return response.content.decode()


def test_each_sentence_shows_its_path_through_the_flow(organizer, judged):
    page = report(organizer, source="llm", run="A", topic="f1")
    rows = sentence_rows(page)
    assert sorted(rows) == [1, 2, 3, 4, 5] and all(text in page for text in F1_TEXTS)
    # By hand (tests/argue/test_argue_flow.py's answers): s0 cites d1, which supports it, and states Ann;
    # s1 needs a citation and is a first instance; s2 needs none; s3 needs one but repeats s0's claim;
    # s4's citation d1 does not support it.
    expected = {
        1: ("rewarded", "every citation supports it and it states a gold answer"),
        2: ("penalized", "needs a citation and is the first instance of its claim"),
        3: ("ignored", "cites nothing and needs no citation"),
        4: ("ignored", "needs a citation, but repeats a claim made before"),
        5: ("penalized", "a cited document does not support it (d1)"),
    }
    shown = {
        number: (
            re.search(r'<span class="badge (\w+)">', row).group(1),
            re.search(r'class="why">([^<]+)<', row).group(1),
        )
        for number, row in rows.items()
    }
    assert shown == expected
    assert "states Q1 · Ann" in rows[1] and "states" not in rows[5]
    assert "needs a citation: yes" in rows[2] and "first instance: yes" in rows[2]
    assert "supports: yes" in rows[1] and "supports: no" in rows[5]
    # The figures of this report (hand-worked in test_argue_flow.py): F1 1/2, coverage 1, sentence support 1/3.
    figures = dict(re.findall(r"<tr><td>(\w+)</td><td class=\"num\">([0-9.]+)</td></tr>", page))
    assert (figures["f1"], figures["nugget_coverage"], figures["sentence_support"]) == ("0.500", "1.000", "0.333")
    assert (figures["sentences"], figures["rewarded"], figures["penalized"]) == ("5", "1", "2")
    assert 'id="report-differences"' not in page  # one source: nothing to compare


def test_two_sources_side_by_side_mark_where_they_differ(organizer, judged):
    job_run_sync(argue_job_create(name="other", bank="gold", topics=["f1"]).pk)
    # The second source found d1 supports s4 ("Bob did not lead."): s4 is then checked against Ann, which it does
    # not state, so it is ignored instead of penalized. Every other judgment is the same.
    SupportAttestation.objects.filter(
        source__name="other", citation__sentence__answer__run__run_id="A", citation__sentence__index=4
    ).update(label="yes")
    page = report(organizer, source="llm", vs="other", run="A", topic="f1")
    rows = sentence_rows(page)
    differing = [number for number, row in rows.items() if 'class="differs' in row]
    assert differing == [5]
    assert re.search(r'<span class="differs-mark">1</span> of 5 sentences judged differently', page)
    assert rows[5].count('<span class="badge penalized">penalized</span>') == 1
    assert "every citation supports it, but it states none of the gold answers it was checked against" in rows[5]
    assert "llm: supports: no" in rows[5] and "other: supports: yes" in rows[5]
    # The report's figures beside each other: the second source's sentence support is 2/3 (s0 and s4 supported,
    # of two citing sentences and s1, a first instance), F1 2 (2/3)(1) / (5/3) = 0.8; the first's 1/3 and 0.5.
    differing_figures = re.findall(r'<tr class="differs"><td>(\w+) <span class="differs-mark">', page)
    assert differing_figures == ["f1", "sentence_support", "citation_support", "penalized"]


def test_a_topic_with_an_ungated_bank_and_the_run_page_links(organizer, judged):
    page = report(organizer, source="llm", run="A", topic="f2")
    assert "ungated (the bank&#x27;s answers carry no documents)" in page
    assert "states Q1 · purr" in sentence_rows(page)[1]
    run_page = organizer.get(reverse("collection:run", args=["A"])).content.decode()
    panel = re.search(r'<section class="panel" id="run-argue-reports">.*?</section>', run_page, flags=re.S).group(0)
    links = re.findall(r'<a href="([^"]+)">(\w+)</a>', panel)
    assert [topic for _, topic in links] == ["f1", "f2", "f3"]
    assert links[0][0].replace("&amp;", "&") == f"{reverse('argue:report')}?source=llm&run=A&topic=f1"
    assert Run.objects.filter(run_id="A").exists()


def test_unknown_choices_are_404_and_assessors_are_refused(organizer, judged):
    assert organizer.get(reverse("argue:report"), {"source": "nope"}).status_code == 404
    assert organizer.get(reverse("argue:report"), {"source": "llm", "run": "Z"}).status_code == 404
    assert organizer.get(reverse("argue:report"), {"source": "llm", "run": "B", "topic": "f2"}).status_code == 404
    assert organizer.get(reverse("argue:report"), {"source": "llm", "vs": "nope"}).status_code == 404
    assessor = client_for(make_user(Role.ASSESSOR, username="pat"))
    assert assessor.get(reverse("argue:report"), {"source": "llm"}).status_code in (302, 403)
