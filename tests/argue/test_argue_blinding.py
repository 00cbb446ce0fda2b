"""Blinding of the ARGUE-style sentence pages: no database id of a report, sentence or citation reaches the
assessor, in a page or in any answer of the judging flow, and a save names its row by the page's token only.

Ids follow the import order of runs, so an id shown would tie a report to its run. The collection here is
built with ids no page could show by chance, so that any of them found in a response is a leak.
"""

import re

import pytest
from django.urls import reverse

from argue.judging import argue_work_give
from argue.models import SupportAttestation
from assessor.models import Answer, AssessorWork, Citation, Sentence, Topic
from assessor.work.roles import Role
from nuggets.banks import bank_questions, bank_store
from reports.models import ReportRequest
from tests.argue.conftest import T1_BANK
from tests.argue.pages import SCRIPT, page_of, post, rows_of
from tests.builders import make_batch, make_run, make_segment, make_topic, make_user, source_of
from tests.scenarios import Recorder

pytestmark = pytest.mark.django_db

# (answer id, [(sentence id, text, [(citation id, docid)])]): the argue conftest's t1 reports of runs A and B.
REPORTS = {
    "A": (
        730517,
        [
            (741263, "Ann led the team in May.", [(758391, "d1"), (758427, "d3")]),
            (741289, "Bob wrote the report.", [(758463, "d2")]),
            (741307, "June was cold.", []),
        ],
    ),
    "B": (730549, [(741331, "Bob led the team.", [(758499, "d2")])]),
}
IDS = [
    str(pk)
    for answer_id, sentences in REPORTS.values()
    for pk in [answer_id, *(s for s, _, _ in sentences), *(c for _, _, cited in sentences for c, _ in cited)]
]


@pytest.fixture
def work() -> AssessorWork:
    topic = make_topic("t1", "who led the team")
    ReportRequest.objects.create(topic=topic, title="The team", word_limit=12, imported_from=make_batch())
    segments = {
        "d1": make_segment("d1", "Ann led the team in May. It went well."),
        "d2": make_segment("d2", "Bob wrote the report. Bob led the team."),
        "d3": make_segment("d3", "Nothing about the team."),
    }
    for run_id, (answer_id, sentences) in REPORTS.items():
        text = " ".join(sentence for _, sentence, _ in sentences)
        answer = Answer.objects.create(
            pk=answer_id, run=make_run(run_id), topic=topic, text=text, words=len(text.split())
        )
        for index, (sentence_id, sentence_text, cited) in enumerate(sentences):
            sentence = Sentence.objects.create(pk=sentence_id, answer=answer, index=index, text=sentence_text)
            for position, (citation_id, docid) in enumerate(cited):
                rank = answer.references.count()
                answer.references.get_or_create(segment=segments[docid], defaults={"rank": rank})
                Citation.objects.create(
                    pk=citation_id,
                    sentence=sentence,
                    position=position,
                    segment=segments[docid],
                    reference_rank=answer.references.get(segment=segments[docid]).rank,
                )
    batch = make_batch()
    bank_store(topic_id="t1", name="gold", questions=T1_BANK, source=source_of("nuggets", "gold"), imported_from=batch)
    return argue_work_give(
        topic=Topic.objects.get(pk="t1"), assessor=make_user(Role.ASSESSOR), by=make_user(Role.ORGANIZER)
    )


def test_no_id_of_a_report_sentence_or_citation_reaches_the_assessor(work):
    browser = Recorder(work.assessor)
    browser.get(reverse("home"))
    browser.get(reverse("argue:judge", args=[work.pk]))
    number = 1
    while True:
        response = browser.get(reverse("argue:sentence", args=[work.pk, number]))
        if response.status_code != 200:
            break
        page = response.content.decode()
        for row in rows_of(page):
            saved = post(browser.client, work, number, row, "yes", page=page)
            browser._keep("save", saved)
            assert saved.status_code == 200, saved.content
        number += 1
    assert number == 4  # A's two kept sentences, B's one
    page = page_of(browser.client, work, 1)
    first = rows_of(page)[0]
    # A conflict (the page showed nothing, "yes" is stored) and a save without the script (redirected back).
    conflict = post(browser.client, work, 1, first, "no", page=page)
    browser._keep("conflict", conflict)
    assert conflict.status_code == 409
    fields = {"label": "no", "previous": "yes", "row": first, "version": work.version + 99}
    fields["answer"] = re.search(r'name="answer" value="([0-9a-f]+)"', page).group(1)
    fields["sentence"] = "0"
    browser.post(reverse("argue:label", args=[work.pk, 1]), fields, follow=True)
    work.refresh_from_db()
    submitted = browser.post(reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    assert submitted.status_code == 200
    browser.get(reverse("argue:sentence", args=[work.pk, 2]))
    browser.get(reverse("home"))
    browser.assert_blind(IDS)


def test_a_save_names_its_row_by_the_token_and_a_bare_id_is_refused(work):
    browser = Recorder(work.assessor)
    # The page of A's first sentence (the reports' order is the assessor's): d1, d3, then Ann, May, June.
    number, page = next(
        (n, page)
        for n in (1, 2, 3)
        if "<strong>Ann led the team in May.</strong>" in (page := page_of(browser.client, work, n))
    )
    rows = rows_of(page)
    assert len(rows) == 5 and all(re.fullmatch(r"[0-9a-f]{20}", row) for row in rows)
    assert re.findall(r'data-row="([^"]+)"', page) == rows
    # d1's citation by its id, as the page once named it, and bare: neither is a row.
    who_led = bank_questions("gold", ["t1"])["t1"][0].pk
    for bare in ("c758391", "758391", f"q{who_led}-0"):
        refused = post(browser.client, work, number, bare, "yes", page=page)
        assert refused.status_code == 400 and "not asked" in refused.json()["error"]
    assert post(browser.client, work, number, rows[0], "yes", page=page).status_code == 200
    assert list(SupportAttestation.objects.values_list("citation_id", "label")) == [(758391, "yes")]
