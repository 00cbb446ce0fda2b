"""People's preferences: giving the work, the pair pages (blind to runs and to LLM preferences), saving,
conflicts, submitting and the lifecycle."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from assessor.models import AssessorWork, Job, LabelSource
from assessor.work.roles import Role
from preferences.judging import pair_order, preference_progress, preference_work_give
from preferences.kinds import PREFERENCE_WORK, PREFERENCES
from preferences.models import PreferenceLabel
from tests.builders import make_answer, make_run, make_topic, make_user

pytestmark = pytest.mark.django_db
SCRIPT = {"HTTP_ACCEPT": "application/json"}  # how the page's script asks for JSON
RUNS = ["SECRETRUN-a", "SECRETRUN-b", "SECRETRUN-c"]


@pytest.fixture
def topic():
    topic = make_topic("p1", query="how do bees make honey")
    for index, run_id in enumerate(RUNS):
        make_answer(
            make_run(run_id),
            topic,
            [(f"Report {index} says bees make honey from nectar.", []), (f"Report {index} ends.", [])],
        )
    return topic


@pytest.fixture
def work(topic):
    return preference_work_give(topic=topic, assessor=make_user(Role.ASSESSOR), by=make_user(Role.ORGANIZER))


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def plant_llm_preferences(topic) -> None:
    """An LLM's preferences beside the person's: never shown on the person's pages."""
    source = LabelSource.objects.create(family="preferences", name="llm-secret-prefs", kind=LabelSource.Kind.LLM)
    job = Job.objects.create(kind=PREFERENCES, output_name=source.name, status=Job.Status.DONE)
    answers = {answer.run.run_id: answer for answer in topic.answers.select_related("run")}
    PreferenceLabel.objects.create(
        source=source,
        job=job,
        topic=topic,
        first=answers[RUNS[0]],
        second=answers[RUNS[1]],
        label=2,
        reasoning="LLMSECRETREASON",
    )


def post_label(client, work, number, label, previous=""):
    page = client.get(reverse("preferences:pair", args=[work.pk, number])).content.decode()
    token = re.search(r'name="answer" value="([0-9a-f]+)"', page).group(1)
    version = re.search(r'name="version" value="(\d+)"', page).group(1)
    return client.post(
        reverse("preferences:label", args=[work.pk, number]),
        {"label": label, "previous": previous, "answer": token, "version": version},
        **SCRIPT,
    )


def test_an_organizer_gives_preference_work_and_the_assessor_sees_it_in_the_queue(organizer, topic):
    assessor = make_user(Role.ASSESSOR, username="pat")
    response = organizer.post(reverse("preferences:organize"), {"topics": "p1", "assessor": assessor.pk, "name": ""})
    assert response.status_code == 302
    work = AssessorWork.objects.get(kind=PREFERENCE_WORK)
    assert (work.assessor, work.source.name, work.source.kind, work.source.family) == (
        assessor,
        "people",
        LabelSource.Kind.PERSON,
        "preferences",
    )
    home = client_for(assessor).get(reverse("home")).content.decode()
    assert "Preference judging" in home and reverse("preferences:judge", args=[work.pk]) in home
    # Three reports: three pairs, none done.
    assert preference_progress([work]) == {work.pk: (0, 3)}


def test_the_pair_page_shows_both_reports_and_nothing_of_runs_or_llms(work, topic):
    plant_llm_preferences(topic)
    client = client_for(work.assessor)
    start = client.get(reverse("preferences:judge", args=[work.pk]))
    assert start.status_code == 302 and start.url == reverse("preferences:pair", args=[work.pk, 1])
    page = client.get(start.url).content.decode()
    left, right = pair_order(work)[0]
    texts = {answer.pk: answer.text for answer in topic.answers.all()}
    first_sentences = [sentence.split(" ends")[0] for sentence in (texts[left], texts[right])]
    assert page.index(first_sentences[0][:8]) < page.index("Right report")
    assert "Topic p1 · pair 1 of 3" in page and "Pairs done" in page
    for secret in ["SECRETRUN", "LLMSECRETREASON", "llm-secret-prefs"]:
        assert secret not in page
    assert 'data-key="1"' in page and 'data-key="2"' in page and 'data-key="0"' in page


def test_a_preference_is_saved_with_its_person_time_and_pair(work):
    client = client_for(work.assessor)
    response = post_label(client, work, 2, "1")
    assert response.status_code == 200 and response.json()["label"] == 1
    label = PreferenceLabel.objects.get(work=work)
    left, right = pair_order(work)[1]
    assert (label.first_id, label.second_id, label.label, label.source_id) == (left, right, 1, work.source_id)
    assert label.seconds_spent >= 0 and label.job_id is None
    assert (label.created_by, label.made_by) == (work.assessor, f"user:{work.assessor}")  # its maker, by name
    # Changed to a tie from the page that showed 1; a save from a page that showed nothing is a conflict.
    assert post_label(client, work, 2, "0", previous="1").json()["label"] == 0
    stale = post_label(client, work, 2, "2", previous="")
    assert stale.status_code == 409 and stale.json()["current"] == 0
    assert post_label(client, work, 2, "7").status_code == 400
    assert PreferenceLabel.objects.get(work=work).label == 0


def test_submit_needs_every_pair_and_freezes_the_work(work):
    client = client_for(work.assessor)
    post_label(client, work, 1, "1")
    work.refresh_from_db()
    refused = client.post(reverse("preferences:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    assert refused.status_code == 400 and "2 pair(s) have no preference yet" in refused.json()["error"]
    post_label(client, work, 2, "2")
    post_label(client, work, 3, "0")
    assert preference_progress([work]) == {work.pk: (3, 3)}
    work.refresh_from_db()
    done = client.post(reverse("preferences:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    assert done.status_code == 200
    work.refresh_from_db()
    assert work.status == AssessorWork.Status.SUBMITTED
    frozen = post_label(client, work, 1, "2", previous="1")
    assert frozen.status_code == 409 and "submitted" in frozen.json()["error"]


def test_another_assessors_work_is_not_found(work):
    other = client_for(make_user(Role.ASSESSOR))
    assert other.get(reverse("preferences:pair", args=[work.pk, 1])).status_code == 404
    assert post_label(client_for(work.assessor), work, 1, "1").status_code == 200
    response = other.post(reverse("preferences:label", args=[work.pk, 1]), {"label": "2", "version": 0}, **SCRIPT)
    assert response.status_code == 404


def test_the_organizer_sees_runs_and_times_and_reopens(organizer, work):
    client = client_for(work.assessor)
    for number in (1, 2, 3):
        post_label(client, work, number, "1")
    work.refresh_from_db()
    client.post(reverse("preferences:submit", args=[work.pk]), {"version": work.version}, **SCRIPT)
    detail = organizer.get(reverse("preferences:organize_work", args=[work.pk])).content.decode()
    assert all(run in detail for run in RUNS) and "first better" in detail
    listing = organizer.get(reverse("preferences:organize")).content.decode()
    assert "3 / 3" in listing and "Reopen" in listing
    organizer.post(reverse("preferences:reopen", args=[work.pk]), {"reason": "check pair 2"})
    work.refresh_from_db()
    assert work.status != AssessorWork.Status.SUBMITTED and work.reopened_count == 1


def test_a_report_known_by_its_text_only_is_shown_whole(work, topic):
    from assessor.models import Answer

    left, _right = pair_order(work)[0]
    Answer.objects.filter(pk=left).update(text="A report whose sentences were never split.")
    Answer.objects.get(pk=left).sentences.all().delete()
    page = client_for(work.assessor).get(reverse("preferences:pair", args=[work.pk, 1])).content.decode()
    assert "A report whose sentences were never split." in page and "This report is empty" not in page
