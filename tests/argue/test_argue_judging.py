"""People's ARGUE-style judgments on the hand-made collection (tests/argue/conftest.py): giving the work, the
sentence pages (the cut shown, blind to runs and to the LLM's judgments), saving, conflicts, submitting,
the scores of the people's source and its agreement with an LLM's."""

import re

import pytest
from django.urls import reverse

from argue.agreement import argue_confusions
from argue.judging import argue_progress, argue_work_give
from argue.kinds import ARGUE_WORK
from argue.llm import argue_job_create
from argue.metrics import METRICS, MICRO
from argue.models import AnswerAttestation, JudgedReport, SupportAttestation
from argue.scoring import argue_scores
from assessor.jobs.engine import job_run_sync
from assessor.models import AssessorWork, LabelSource, Topic
from assessor.scoring.lifecycle import open_work_included
from assessor.work.roles import Role
from metaeval.replicates import replicate_agreement
from tests.argue.pages import SCRIPT, client_for, judge_all, page_of, post, rows_of
from tests.builders import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def work(argue_collection):
    return argue_work_give(
        topic=Topic.objects.get(pk="t1"), assessor=make_user(Role.ASSESSOR), by=make_user(Role.ORGANIZER)
    )


# Sentence 1 of A's t1 report: d1, d3, then Ann, May, June; sentence 2: d2, then Bob.
PERSON = [["yes", "yes", "yes", "yes", "yes"], ["no", "no"]]


def test_an_organizer_gives_the_work_and_the_assessor_sees_it(organizer, argue_collection):
    assessor = make_user(Role.ASSESSOR, username="pat")
    response = organizer.post(
        reverse("argue:organize"), {"topics": "t1", "assessor": assessor.pk, "bank": "", "name": ""}
    )
    assert response.status_code == 302
    work = AssessorWork.objects.get(kind=ARGUE_WORK)
    assert (work.source.name, work.source.kind, work.source.family, work.nugget_set_name) == (
        "people",
        LabelSource.Kind.PERSON,
        "argue",
        "gold",
    )
    home = client_for(assessor).get(reverse("home")).content.decode()
    assert "ARGUE-style judging" in home and reverse("argue:judge", args=[work.pk]) in home
    # s0 asks 2 citations + 3 gold answers, s1 1 + 1; s2 is cut; B's report is empty.
    assert argue_progress([work]) == {work.pk: (0, 7)}
    assert organizer.get(reverse("argue:organize")).status_code == 200


def test_the_sentence_page_shows_the_cut_and_nothing_of_runs_or_llms(llm_server, work):
    job_run_sync(argue_job_create(name="llm-secret", bank="gold").pk)
    client = client_for(work.assessor)
    start = client.get(reverse("argue:judge", args=[work.pk]))
    assert start.status_code == 302 and start.url == reverse("argue:sentence", args=[work.pk, 1])
    page = page_of(client, work, 1)
    assert "Topic t1 · sentence 1 of 2" in page
    assert "<strong>Ann led the team in May.</strong>" in page and "<s>June was cold.</s>" in page
    assert page.index("Bob wrote the report.") < page.index('id="cut-mark"') < page.index("June was cold.")
    assert "Ann led the team in May. It went well." in page  # the cited document
    assert "Who led the team?" in page and "When did it start?" in page and ">June<" in page
    assert len(rows_of(page)) == 5 and 'data-current="yes"' not in page and 'data-current="no"' not in page
    for secret in ['run_id">A<', "llm-secret", "read for the sentence"]:
        assert secret not in page
    assert 'data-key="y"' in page and 'data-key="n"' in page


def test_a_judgment_is_saved_with_its_person_and_time_and_conflicts_are_refused(work):
    client = client_for(work.assessor)
    page = page_of(client, work, 2)
    support, answer = rows_of(page)
    response = post(client, work, 2, support, "no", page=page)
    assert response.status_code == 200 and response.json()["label"] == "no"
    saved = SupportAttestation.objects.get(work=work)
    assert (saved.label, saved.created_by, saved.source_id, saved.job_id) == ("no", work.assessor, work.source_id, None)
    assert saved.citation.segment_id == "d2" and saved.seconds_spent >= 0
    assert post(client, work, 2, answer, "yes").json()["label"] == "yes"
    assert AnswerAttestation.objects.get(work=work).question.text == "Who led the team?"
    # A page that showed nothing, after "yes" was saved elsewhere: a conflict, with the current label.
    stale = post(client, work, 2, answer, "no", previous="")
    assert stale.status_code == 409 and stale.json()["current"] == "yes"
    assert post(client, work, 2, answer, "maybe").status_code == 400
    assert post(client, work, 2, "q999-0", "yes").status_code == 400
    assert post(client, work, 2, answer, "yes", sentence="2").status_code == 400  # the cut sentence
    # A replayed operation writes nothing twice.
    first = post(client, work, 2, answer, "no", previous="yes", op_id="op-1")
    again = post(client, work, 2, answer, "no", previous="yes", op_id="op-1")
    assert first.json()["label"] == again.json()["label"] == "no"
    assert AnswerAttestation.objects.filter(work=work).count() == 1


def test_submit_needs_every_answer_then_the_people_source_is_scored(llm_server, work):
    client = client_for(work.assessor)
    judge_all(client, work, [PERSON[0], []][:1])
    work.refresh_from_db()
    refused = client.post(reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    assert refused.status_code == 400 and "2 question(s)" in refused.json()["error"]
    with pytest.raises(LookupError):
        argue_scores(name="people")
    judge_all(client, work, PERSON)
    work.refresh_from_db()
    assert client.post(reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT).status_code == 200
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    reports = dict(JudgedReport.objects.filter(work=work).values_list("answer__run__run_id", "kept"))
    assert reports == {"A": 2, "B": 0}
    scores = argue_scores(name="people")
    a = scores.per_topic[("A", "t1")]
    # citations d1 yes, d3 yes, d2 no; s0 supported, s1 not; Ann covers q0, May and June cover q1 (AND)
    assert a["citation_support"] == pytest.approx(2 / 3) and a["sentence_support"] == pytest.approx(0.5)
    assert a["nugget_coverage"] == 1.0 and a["weighted_coverage"] == 1.0
    assert a["f1"] == pytest.approx(2 * 0.5 / 1.5)
    assert scores.topics == ["t1"] and scores.run_means["B"]["f1"] == 0.0
    # Against the LLM's judgments (rows the LLM): d1 yes/yes, d2 yes/no, d3 no/yes; Ann, May yes/yes, Bob yes/no,
    # June no/yes; t2's purr only the LLM judged.
    job_run_sync(argue_job_create(name="llm", bank="gold").pk)
    confusions = argue_confusions("llm", "people")
    assert confusions["support"].counts == [[1, 1], [1, 0]]
    assert confusions["answers"].counts == [[2, 1], [1, 0]] and confusions["answers"].missing_b == 1
    frozen = post(client, work, 1, rows_of(page_of(client, work, 1))[0], "no", previous="yes")
    assert frozen.status_code == 409 and "submitted" in frozen.json()["error"]


def test_another_assessors_work_is_not_found(work):
    other = client_for(make_user(Role.ASSESSOR))
    assert other.get(reverse("argue:sentence", args=[work.pk, 1])).status_code == 404


def test_check_all_asks_every_gold_answer(argue_collection):
    work = argue_work_give(topic=Topic.objects.get(pk="t1"), assessor=make_user(Role.ASSESSOR), by=None, check_all=True)
    # s0: 2 citations + 4 answers; s1: 1 + 4
    assert argue_progress([work]) == {work.pk: (0, 11)}


def test_a_second_assessor_judges_independently_and_the_two_are_compared(llm_server, organizer, work):
    job_run_sync(argue_job_create(name="llm", bank="gold").pk)
    first = client_for(work.assessor)
    judge_all(first, work, PERSON)
    refused = organizer.post(
        reverse("argue:organize"),
        {"topics": "t1", "assessor": work.assessor.pk, "name": "second", "second_of": "people"},
    )
    assert refused.status_code == 400 and "independent judging needs someone else" in refused.content.decode()
    other = make_user(Role.ASSESSOR)
    response = organizer.post(
        reverse("argue:organize"), {"topics": "t1", "assessor": other.pk, "name": "second", "second_of": "people"}
    )
    assert response.status_code == 302
    second = AssessorWork.objects.get(source__name="second")
    assert second.independent and second.nugget_set_name == "gold"
    client = client_for(other)
    page = page_of(client, second, 1)
    assert len(rows_of(page)) == 5 and 'data-current="yes"' not in page  # blind to the first's judgments
    # The second agrees but on d3 (no) and June (no).
    judge_all(client, second, [["yes", "no", "yes", "yes", "no"], ["no", "no"]])
    for one, done in ((first, work), (client, second)):
        done.refresh_from_db()
        assert one.post(reverse("argue:submit", args=[done.pk]), {"version": done.version}, **SCRIPT).status_code == 200
    confusions = argue_confusions("people", "second")
    assert confusions["support"].counts == [[1, 1], [0, 1]]
    assert confusions["answers"].counts == [[2, 1], [0, 1]]
    # The second source is the first's replicate: the second assessors page pools both judgments, item by item.
    replicate = LabelSource.objects.get(family="argue", name="second")
    assert replicate.replicate_of is not None and replicate.replicate_of.name == "people"
    agreement = replicate_agreement(replicate)
    assert agreement.topics == ["t1"] and agreement.human.labels == ["yes", "no"]
    assert agreement.human.counts == [[3, 2], [0, 2]]
    # The two people's run scores, compared metric by metric (one run here: no tau to speak of).
    assert {tau.metric for tau in agreement.taus} == set(METRICS + MICRO)
    page = organizer.get(reverse("metaeval:replicates")).content.decode()
    assert "ARGUE-style source <code>second</code>, a replicate of <code>people</code>" in page
    # The LLM beside each person, on the items all three judged, counted here from the stored judgments.
    (llm,) = agreement.llms
    judged = {
        name: {("s", c): label for c, label in SupportAttestation.objects.filter(source__name=name).exclude(label="")
               .values_list("citation_id", "label")}
        | {("a", s, q, i): label for s, q, i, label in AnswerAttestation.objects.filter(source__name=name)
           .values_list("sentence_id", "question_id", "answer_index", "label")}
        for name in ("people", "second", "llm")
    }  # fmt: skip
    shared = judged["people"].keys() & judged["second"].keys() & judged["llm"].keys()
    assert llm.name == "llm" and llm.items == len(shared) == 7
    for person, confusion in (("people", llm.with_first), ("second", llm.with_replicate)):
        pairs = [(judged[person][item], judged["llm"][item]) for item in shared]
        assert confusion.counts == [[pairs.count((a, b)) for b in ("yes", "no")] for a in ("yes", "no")]


def test_reopened_work_is_not_counted_until_it_is_submitted_again(organizer, work):
    client = client_for(work.assessor)
    judge_all(client, work, PERSON)
    work.refresh_from_db()
    client.post(reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    assert argue_scores(name="people").run_means["A"]["f1"] == pytest.approx(2 / 3)
    assert organizer.post(reverse("argue:reopen", args=[work.pk]), {"reason": "check d2"}).status_code == 302
    with pytest.raises(LookupError):
        argue_scores(name="people")
    with open_work_included():
        assert argue_scores(name="people").run_means["A"]["f1"] == pytest.approx(2 / 3)
    work.refresh_from_db()
    page = page_of(client, work, 2)
    assert post(client, work, 2, rows_of(page)[0], "yes", previous="no", page=page).status_code == 200
    client.post(reverse("argue:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    # d2 now supports: both citing sentences supported, coverage 1: F1 1
    assert argue_scores(name="people").run_means["A"]["f1"] == pytest.approx(1.0)
    assert JudgedReport.objects.filter(work=work).count() == 2


def test_the_organizer_sees_a_works_sentences_with_their_runs(organizer, work):
    judge_all(client_for(work.assessor), work, [PERSON[0]])
    page = organizer.get(reverse("argue:organize_work", args=[work.pk])).content.decode()
    assert "Bank</dt><dd>gold" in page
    rows = re.findall(r'<tr><td class="num">(\d+)</td><td class="mono">(\w+)</td><td class="num">(\d+)</td>'
                      r'<td class="num">(\d+) / (\d+)</td><td class="num">(\d+)</td>', page)  # fmt: skip
    # Sentence 1 of A: 5 answered, all yes; sentence 2: none of 2 yet.
    assert rows == [("1", "A", "1", "5", "5", "5"), ("2", "A", "2", "0", "2", "0")]
    listing = organizer.get(reverse("argue:organize")).content.decode()
    assert f'id="argue-{work.pk}"' in listing and "5 / 7" in listing
