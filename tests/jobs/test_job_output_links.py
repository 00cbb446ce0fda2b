"""A job's pages link what it made (its source's leaderboard, its run, its banks or sets, its qrels) once it made
something: each kind's app says where, the jobs pages show it on the job's page and in its row of the list."""

from html import escape

import pytest
from django.urls import reverse

from argue.kinds import ARGUE
from assessor.models import Job
from assignment.kinds import AUTO_ASSIGN
from assignment.models import AssignmentLabel
from crucible.kinds import CRUCIBLE
from crucible.models import CrucibleRun
from grades.kinds import GRADES
from nuggets.kinds import AUTO_NUGGETS, DRAFT_NUGGETS
from preferences.kinds import PREFERENCES
from prefnugget.kinds import PREFNUGGET_BANK, QUERY_BANK
from relevance.kinds import UMBRELA
from support.kinds import AUTO_SUPPORT
from tests.builders import make_answer, make_nugget_set, make_run, make_topic
from tests.verdicts.models import VERDICT_JOB

pytestmark = pytest.mark.django_db

# (kind, output name, params, the page of what it made), the addresses written out by hand from docs/pages.md.
MADE = [
    (AUTO_NUGGETS, "nug-llm", {}, "/collection/download/nuggets/nug-llm/"),
    (DRAFT_NUGGETS, "nug-drafts", {}, "/collection/download/nuggets/nug-drafts/"),
    (AUTO_ASSIGN, "assign-llm", {"nuggets": "manual"}, "/assignment/leaderboard/?nuggets=manual&assigner=assign-llm"),
    # A re-run of stale nuggets keeps no list name but the lists it labelled again: the first of them.
    (
        AUTO_ASSIGN,
        "assign-rerun",
        {"rerun": True, "stale": {"zeta": {"t1": [3]}, "alpha": {"t1": [1]}}},
        "/assignment/leaderboard/?nuggets=alpha&assigner=assign-rerun",
    ),
    (AUTO_SUPPORT, "support-llm", {}, "/collection/leaderboards/support/?method=support-llm"),
    (UMBRELA, "umbrela-llm", {}, "/collection/download/qrels/umbrela-llm/"),
    (PREFERENCES, "prefs-llm", {}, "/collection/leaderboards/borda/?source=prefs-llm"),
    (PREFNUGGET_BANK, "bank-contrast", {}, "/collection/download/banks/bank-contrast/"),
    (QUERY_BANK, "bank-query", {}, "/collection/download/banks/bank-query/"),
    (ARGUE, "argue-llm", {}, "/collection/leaderboards/argue/?source=argue-llm"),
    (GRADES, "grades-llm", {}, "/collection/leaderboards/grades/?source=grades-llm"),
    # An app on the answer-label kit (the test settings' example): the kit's board of its source.
    (VERDICT_JOB, "verdicts-llm", {}, "/labels/verdicts/leaderboard/?source=verdicts-llm"),
]


def finished_job(kind: str, name: str, params: dict, *, status: str = Job.Status.DONE, done: int = 3) -> Job:
    return Job.objects.create(
        kind=kind,
        output_name=name,
        output_family=kind,
        params=params,
        model="fake-model",
        status=status,
        total_items=3,
        done_items=done,
        failed_items=3 - done,
    )


def href(url: str) -> str:
    return f'href="{escape(url)}"'


def pages_of(organizer, job: Job) -> tuple[str, str]:
    detail = organizer.get(reverse("jobs:detail", args=[job.pk])).content.decode()
    listing = organizer.get(reverse("jobs:list")).content.decode()
    return detail, listing


def row_of(listing: str, job: Job) -> str:
    start = listing.index(f'href="/jobs/{job.pk}/"')
    return listing[start : listing.index("</tr>", start)]


def test_a_finished_job_links_what_it_made_for_each_kind(organizer):
    checked = 0
    for kind, name, params, url in MADE:
        job = finished_job(kind, name, params)
        detail, listing = pages_of(organizer, job)
        assert f'<p id="job-output">What it made: <a {href(url)}><code>{name}</code></a></p>' in detail, kind
        assert f'<a class="job-output" {href(url)} title="What the job made"><code>{name}</code></a>' in row_of(
            listing, job
        ), kind
        checked += 1
    assert checked == len(MADE) == 12


def test_a_crucible_job_links_its_run_once_the_run_is_stored(organizer):
    job = finished_job(CRUCIBLE, "crucible-run", {})
    made = CrucibleRun.objects.create(job=job, run_name="crucible-run", bank="b", variant="extractive", per_question=1)
    detail, _listing = pages_of(organizer, job)
    assert 'id="job-output"' not in detail  # the run could not be stored: nothing to show
    made.run = make_run("crucible-run")
    made.save()
    detail, listing = pages_of(organizer, job)
    assert f"What it made: <a {href('/collection/runs/crucible-run')}>" in detail
    assert href("/collection/runs/crucible-run") in row_of(listing, job)


def test_only_a_job_that_made_something_links_it(organizer):
    running = finished_job(AUTO_SUPPORT, "support-running", {}, status=Job.Status.RUNNING, done=1)
    failed_empty = finished_job(AUTO_SUPPORT, "support-failed", {}, status=Job.Status.FAILED, done=0)
    cancelled = finished_job(AUTO_SUPPORT, "support-cancelled", {}, status=Job.Status.CANCELLED, done=2)
    failed_some = finished_job(AUTO_SUPPORT, "support-partly", {}, status=Job.Status.FAILED, done=1)
    for job in (running, failed_empty):
        detail, listing = pages_of(organizer, job)
        assert 'id="job-output"' not in detail and "job-output" not in row_of(listing, job)
    for job in (cancelled, failed_some):
        detail, listing = pages_of(organizer, job)
        url = f"/collection/leaderboards/support/?method={job.output_name}"
        assert f"What it made: <a {href(url)}><code>{job.output_name}</code></a> " in detail
        assert "(the items done only)" in detail
        assert href(url) in row_of(listing, job)


def test_an_auto_assign_run_through_its_page_links_its_leaderboard(organizer, llm_server, worker_inline):
    topic = make_topic("p1", query="zebra stripes")
    make_nugget_set(topic, texts=["zebra stripes are black", "lions roar"], kind="manual", name="manual")
    for i in range(2):
        make_answer(make_run(f"run{i}"), topic, [(f"Zebra stripes are black, says {i}.", [])])
    organizer.post(reverse("jobs:launch", args=["auto_assign"]), {"name": "auto-page", "nuggets": "manual"})
    job = Job.objects.get(output_name="auto-page")
    assert job.status == Job.Status.DONE and AssignmentLabel.objects.filter(assigner="auto-page").count() == 4
    detail, listing = pages_of(organizer, job)
    url = "/assignment/leaderboard/?nuggets=manual&amp;assigner=auto-page"
    assert f'What it made: <a href="{url}"><code>auto-page</code></a></p>' in detail
    assert f'href="{url}"' in row_of(listing, job)
    # The link leads to the board, which lists the assigner's runs.
    board = organizer.get("/assignment/leaderboard/?nuggets=manual&assigner=auto-page")
    assert board.status_code == 200 and "run0" in board.content.decode()
