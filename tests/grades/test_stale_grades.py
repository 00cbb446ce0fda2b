"""An LLM grade source is stale once a question of a bank it graded changes (PROTOCOL.md: until the changed items
are labelled again), as the first family's LLM assigners are: the leaderboard, the leaderboards index and
export_grades say so, the changed question counts 0 meanwhile, and a re-run grades just the changed items.

End to end with the local fake LLM server, whose grade is the number of the question's words of four letters or
more found in the passage (at most 5), recomputed here by hand."""

import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.jobs.engine import JobRequestInvalid, job_run_sync
from assessor.models import Answer, Job, LabelSource
from assessor.work.roles import Role
from grades.llm import grades_job_create, grades_rerun_create
from grades.models import GradeLabel
from grades.scoring import grade_scores
from nuggets.dependents import Change, nugget_list_changed
from nuggets.models import Nugget, NuggetSet
from tests.builders import make_user
from tests.grades.conftest import BANK, KIDDIE_REQUESTS

pytestmark = pytest.mark.django_db

REWORDED = "Which pigment makes leaves turn red?"
STALE = (
    "Stale: 1 question(s) of the banks of 1 topic(s) (leaf) changed since &#x27;llm&#x27; graded them; they count 0 "
    "for every report until the changed items are graded again."
)


def long_words(text: str) -> set[str]:
    return {word.lower() for word in re.findall(r"[A-Za-z0-9']+", text) if len(word) >= 4}


def grade(question: str, passage: str) -> int:
    return min(5, len(long_words(question) & long_words(passage)))


def avggrades(questions: list[str]) -> dict[str, float]:
    """Each run's mean avggrade: on leaf (the one topic graded here) over the bank's 3 questions, the given ones
    graded, and 0 on each of the other kiddie requests."""
    return {
        run: sum(grade(question, text) for question in questions) / 3 / len(KIDDIE_REQUESTS)
        for run, text in Answer.objects.filter(topic_id="leaf").values_list("run__run_id", "text")
    }


def test_a_reworded_question_leaves_the_llm_stale_until_its_items_are_graded_again(
    llm_server, qbank, client, monkeypatch
):
    job_run_sync(grades_job_create(name="llm", bank="qbank", topics=["leaf"]).pk)
    reports = Answer.objects.filter(topic_id="leaf").count()
    assert grade_scores(name="llm").run_means.keys() and reports >= 2
    assert any(grade(REWORDED, text) != grade(BANK["leaf"][0], text) for text in Answer.objects.values_list("text", flat=True).filter(topic_id="leaf"))  # fmt: skip

    bank = NuggetSet.objects.get(topic_id="leaf", name="qbank")
    first = Nugget.objects.get(nugget_set=bank, position=0)
    Nugget.objects.filter(pk=first.pk).update(text=REWORDED)
    done = nugget_list_changed(bank, {first.pk: Change.REWORDED}, by=None, before={first.pk: BANK["leaf"][0]})
    assert "the LLM grades 'llm' are stale on 1 question(s) until they are graded again" in done
    assert LabelSource.objects.get(family="question_grades", name="llm").stale == {"qbank": {"leaf": [first.pk]}}

    # Stale: said on the leaderboard (with the way out), the leaderboards index and by export_grades; the
    # reworded question counts 0 for every report meanwhile.
    client.force_login(make_user(Role.ORGANIZER))
    leaderboard = reverse("collection:grade_leaderboard") + "?source=llm"
    page = client.get(leaderboard).content.decode()
    assert STALE in page and 'id="rerun-stale"' in page
    assert STALE in client.get(reverse("collection:leaderboards")).content.decode()
    err = io.StringIO()
    call_command("export_grades", "--name", "llm", stdout=io.StringIO(), stderr=err)
    assert "warning: Stale: 1 question(s) of the banks of 1 topic(s) (leaf)" in err.getvalue()
    means = grade_scores(name="llm").run_means
    for run, expected in avggrades(BANK["leaf"][1:]).items():
        assert means[run]["avggrade"] == pytest.approx(expected)

    # Fill the changed items from the leaderboard: one call per report, for the reworded question only.
    monkeypatch.setattr("grades.views.job_queue", lambda job: job_run_sync(job.pk))
    calls = llm_server.count
    response = client.post(reverse("grades:rerun_stale", args=["llm"]))
    job = Job.objects.get(output_name="llm", params__rerun=True)
    assert response.status_code == 302 and response.url == reverse("jobs:detail", args=[job.pk])
    assert client.get(response.url).status_code == 200
    job.refresh_from_db()
    assert (job.status, job.total_items, llm_server.count - calls) == (Job.Status.DONE, reports, reports)
    assert {item.payload["nugget"] for item in job.items.all()} == {first.pk}
    assert LabelSource.objects.get(family="question_grades", name="llm").stale == {}
    page = client.get(leaderboard).content.decode()
    assert "Stale" not in page and 'id="rerun-stale"' not in page
    means = grade_scores(name="llm").run_means
    for run, expected in avggrades([REWORDED, *BANK["leaf"][1:]]).items():
        assert means[run]["avggrade"] == pytest.approx(expected)
    # Nothing is left to fill.
    refused = client.post(reverse("grades:rerun_stale", args=["llm"]), follow=True).content.decode()
    assert "are up to date: nothing to grade again" in refused


def test_run_grades_rerun_stale_fills_the_changed_items(llm_server, qbank):
    job_run_sync(grades_job_create(name="llm", bank="qbank", topics=["bee"]).pk)
    bank = NuggetSet.objects.get(topic_id="bee", name="qbank")
    added = Nugget.objects.create(
        nugget_set=bank, position=2, text="Where do bees live?", imported_from_id=bank.imported_from_id
    )
    nugget_list_changed(bank, {added.pk: Change.ADDED}, by=None)
    assert LabelSource.objects.get(family="question_grades", name="llm").stale == {"qbank": {"bee": [added.pk]}}
    # One filling at a time: a second would ask the same grades again.
    queued = grades_rerun_create(name="llm")
    with pytest.raises(JobRequestInvalid, match=f"job {queued.pk} still grades into 'llm'"):
        grades_rerun_create(name="llm")
    Job.objects.filter(pk=queued.pk).update(status=Job.Status.CANCELLED)
    out = io.StringIO()
    call_command("run_grades", "--name", "llm", "--rerun-stale", "--sync", "--threads", "1", stdout=out)
    assert LabelSource.objects.get(family="question_grades", name="llm").stale == {}
    reports = Answer.objects.filter(topic_id="bee").count()
    means = grade_scores(name="llm").run_means
    for run, text in Answer.objects.filter(topic_id="bee").values_list("run__run_id", "text"):
        expected = sum(grade(q, text) for q in [*BANK["bee"], "Where do bees live?"]) / 3 / len(KIDDIE_REQUESTS)
        assert means[run]["avggrade"] == pytest.approx(expected)
    assert Job.objects.get(output_name="llm", params__rerun=True, status=Job.Status.DONE).total_items == reports


def test_a_rerun_grades_as_the_source_did_the_report_with_its_documents(llm_server, qbank):
    job_run_sync(grades_job_create(name="both", bank="qbank", topics=["bee"], report_and_documents=True, gate=1).pk)
    bank = NuggetSet.objects.get(topic_id="bee", name="qbank")
    added = Nugget.objects.create(
        nugget_set=bank, position=2, text="Where do bees live?", imported_from_id=bank.imported_from_id
    )
    nugget_list_changed(bank, {added.pk: Change.ADDED}, by=None)
    rerun = grades_rerun_create(name="both")
    assert (rerun.params["report_and_documents"], rerun.params["gate"]) == (True, 1)
    job_run_sync(rerun.pk)
    assert not GradeLabel.objects.filter(source__name="both", nugget=added, document_grade__isnull=True).exists()
    assert (
        GradeLabel.objects.filter(source__name="both", nugget=added).count()
        == Answer.objects.filter(topic_id="bee").count()
    )
