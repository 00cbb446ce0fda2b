"""People's grades: giving the work with its bank, the report pages (blind to runs and to LLM grades),
saving, conflicts, submitting, the organizer's pages and the scores after the submit."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from assessor.models import AssessorWork, LabelSource
from assessor.work.roles import Role
from assessor.work.services import WorkError
from grades.judging import grade_progress, grade_work_give, report_order
from grades.kinds import GRADE_WORK, GRADES_FAMILY
from grades.models import GradeLabel
from grades.scoring import grade_scores
from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS
from nuggets.models import NuggetSet
from tests.builders import make_answer, make_batch, make_run, make_topic, make_user, source_of

pytestmark = pytest.mark.django_db
SCRIPT = {"HTTP_ACCEPT": "application/json"}  # how the page's script asks for JSON
RUNS = ["SECRETRUN-a", "SECRETRUN-b"]
QUESTIONS = ["How do bees make honey?", "Do bees sting?", "Where do bees live?"]


def store_bank(topic, name: str, texts: list[str]) -> NuggetSet:
    batch = make_batch(kind=IMPORT_NUGGETS)
    source = source_of("nuggets", name, imported_from=batch)
    questions = [Question(text=text) for text in texts]
    return bank_store(topic_id=topic.pk, name=name, questions=questions, source=source, imported_from=batch)


@pytest.fixture
def topic():
    topic = make_topic("g1", query="how do bees make honey")
    for index, run_id in enumerate(RUNS):
        make_answer(
            make_run(run_id), topic, [(f"Report {index} says bees make honey.", []), (f"Report {index} ends.", [])]
        )
    store_bank(topic, "qbank", QUESTIONS)
    return topic


@pytest.fixture
def work(topic):
    return grade_work_give(topic=topic, assessor=make_user(Role.ASSESSOR), by=make_user(Role.ORGANIZER))


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def question_ids(topic) -> list[int]:
    return list(
        NuggetSet.objects.get(topic=topic, name="qbank").nuggets.order_by("position").values_list("pk", flat=True)
    )


def post_grade(client, work, number, question, label, previous=""):
    page = client.get(reverse("grades:report", args=[work.pk, number])).content.decode()
    token = re.search(r'name="answer" value="([0-9a-f]+)"', page).group(1)
    version = re.search(r'name="version" value="(\d+)"', page).group(1)
    return client.post(
        reverse("grades:label", args=[work.pk, number]),
        {"label": label, "previous": previous, "answer": token, "version": version, "question": question},
        **SCRIPT,
    )


def test_an_organizer_gives_grading_on_a_bank_and_the_assessor_sees_it_in_the_queue(organizer, topic):
    assessor = make_user(Role.ASSESSOR, username="pat")
    page = organizer.get(reverse("grades:organize")).content.decode()
    assert '<option value="qbank">' in page
    response = organizer.post(
        reverse("grades:organize"), {"topics": "g1", "assessor": assessor.pk, "bank": "qbank", "name": ""}
    )
    assert response.status_code == 302
    work = AssessorWork.objects.get(kind=GRADE_WORK)
    assert (work.assessor, work.nugget_set_name, work.source.name, work.source.kind, work.source.family) == (
        assessor,
        "qbank",
        "people",
        LabelSource.Kind.PERSON,
        GRADES_FAMILY,
    )
    home = client_for(assessor).get(reverse("home")).content.decode()
    assert "Grading" in home and reverse("grades:judge", args=[work.pk]) in home
    assert grade_progress([work]) == {work.pk: (0, 2 * 3)}  # two reports, three questions


def test_a_topic_without_the_bank_or_with_two_banks_is_refused(topic):
    other = make_topic("g2")
    with pytest.raises(WorkError, match="no submitted question bank 'qbank'"):
        grade_work_give(topic=other, assessor=make_user(Role.ASSESSOR), by=None, bank="qbank")
    store_bank(topic, "second", ["Why?"])
    with pytest.raises(WorkError, match="has 2 question banks: name the bank"):
        grade_work_give(topic=topic, assessor=make_user(Role.ASSESSOR), by=None)


def test_the_report_page_shows_the_report_its_questions_and_the_six_grades_and_nothing_of_runs_or_llms(work, topic):
    source = LabelSource.objects.create(family=GRADES_FAMILY, name="llm-secret-grades", kind=LabelSource.Kind.LLM)
    first = report_order(work)[0]
    GradeLabel.objects.create(
        source=source,
        topic=topic,
        answer_id=first,
        nugget_id=question_ids(topic)[0],
        label=5,
        reasoning="LLMSECRETREASON",
        imported_from=make_batch(kind="grades_test"),
    )
    client = client_for(work.assessor)
    start = client.get(reverse("grades:judge", args=[work.pk]))
    assert start.status_code == 302 and start.url == reverse("grades:report", args=[work.pk, 1])
    page = client.get(start.url).content.decode()
    assert "Topic g1 · report 1 of 2" in page
    assert all(question.replace("?", "") in page for question in QUESTIONS)
    assert all(f'data-key="{grade}"' in page for grade in range(6))
    assert "The answer is highly relevant, complete, and accurate." in page
    assert "The answer is not relevant or complete at all." in page
    for secret in ["SECRETRUN", "LLMSECRETREASON", "llm-secret-grades"]:
        assert secret not in page
    assert 'class="choice tone-yes on"' not in page  # the LLM's 5 is not shown as chosen


def test_a_grade_is_saved_with_its_person_time_and_question(work, topic):
    client = client_for(work.assessor)
    q1, q2, _q3 = question_ids(topic)
    response = post_grade(client, work, 2, q2, "4")
    assert response.status_code == 200 and response.json()["label"] == 4
    label = GradeLabel.objects.get(work=work)
    assert (label.answer_id, label.nugget_id, label.label, label.source_id) == (
        report_order(work)[1],
        q2,
        4,
        work.source_id,
    )
    assert label.created_by == work.assessor and label.job_id is None and label.seconds_spent >= 0
    assert post_grade(client, work, 2, q2, "1", previous="4").json()["label"] == 1
    stale = post_grade(client, work, 2, q2, "3", previous="")
    assert stale.status_code == 409 and stale.json()["current"] == 1
    assert post_grade(client, work, 2, q2, "6").status_code == 400
    assert post_grade(client, work, 2, 999999, "2").status_code == 400
    assert GradeLabel.objects.get(work=work).label == 1


def test_submit_needs_every_grade_and_then_the_grades_count(work, topic):
    client = client_for(work.assessor)
    questions = question_ids(topic)
    post_grade(client, work, 1, questions[0], "5")
    work.refresh_from_db()
    refused = client.post(reverse("grades:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    assert refused.status_code == 400 and "5 grade(s) are still to be given" in refused.json()["error"]
    # Report 1: 5, 4, 0; report 2: 2, 2, 1.
    for number, grades in ((1, "540"), (2, "221")):
        for question, grade in zip(questions, grades, strict=True):
            current = "5" if (number, question) == (1, questions[0]) else ""
            post_grade(client, work, number, question, grade, previous=current)
    assert grade_progress([work]) == {work.pk: (6, 6)}
    with pytest.raises(LookupError):
        grade_scores(name="people")  # open work counts nothing
    work.refresh_from_db()
    assert client.post(reverse("grades:submit", args=[work.pk]), {"version": work.version}, **SCRIPT).status_code == 200
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    order = report_order(work)
    runs = {answer.pk: answer.run.run_id for answer in topic.answers.select_related("run")}
    scores = grade_scores(name="people")
    first, second = scores.per_topic[(runs[order[0]], "g1")], scores.per_topic[(runs[order[1]], "g1")]
    assert (first["maxgrade"], first["avggrade"], first["cover4"], first["covered4"]) == (
        5,
        3.0,
        pytest.approx(2 / 3),
        2,
    )
    assert (second["maxgrade"], second["avggrade"], second["cover4"], second["covered2"]) == (
        2,
        pytest.approx(5 / 3),
        0,
        2,
    )
    frozen = post_grade(client, work, 1, questions[0], "1", previous="5")
    assert frozen.status_code == 409 and "submitted" in frozen.json()["error"]


def test_another_assessors_work_is_not_found(work, topic):
    other = client_for(make_user(Role.ASSESSOR))
    assert other.get(reverse("grades:report", args=[work.pk, 1])).status_code == 404
    response = other.post(reverse("grades:label", args=[work.pk, 1]), {"label": "2", "version": 0}, **SCRIPT)
    assert response.status_code == 404


def test_the_organizer_sees_runs_grades_and_times_and_reopens(organizer, work, topic):
    client = client_for(work.assessor)
    for number in (1, 2):
        for question in question_ids(topic):
            post_grade(client, work, number, question, "3")
    work.refresh_from_db()
    client.post(reverse("grades:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    detail = organizer.get(reverse("grades:organize_work", args=[work.pk])).content.decode()
    assert all(run in detail for run in RUNS) and "3 3 3" in detail and "qbank" in detail
    listing = organizer.get(reverse("grades:organize")).content.decode()
    assert "6 / 6" in listing and "Reopen" in listing
    organizer.post(reverse("grades:reopen", args=[work.pk]), {"reason": "check report 2"})
    work.refresh_from_db()
    assert work.status != AssessorWork.Status.SUBMITTED and work.reopened_count == 1


def test_a_bank_reopened_for_editing_makes_the_page_wait(work, topic):
    NuggetSet.objects.filter(topic=topic, name="qbank").update(status=NuggetSet.Status.OPEN)
    page = client_for(work.assessor).get(reverse("grades:report", args=[work.pk, 1])).content.decode()
    assert "Waiting for the question bank &#x27;qbank&#x27; to be submitted: nothing to label yet." in page
