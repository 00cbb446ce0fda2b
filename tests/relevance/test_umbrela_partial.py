"""A failed or running UMBRELA job keeps its qrels source from being final: the qrels agreement section of the
meta-evaluation and `export_qrels` say so, the way the leaderboards say it of AutoAssign and AutoSupport jobs,
until the job is resumed and finishes."""

import html
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.jobs.engine import job_reopen, job_run_sync
from assessor.models import Segment
from assessor.work.roles import Role
from relevance.umbrela import umbrela_job_create
from tests.builders import make_qrel, make_user

pytestmark = pytest.mark.django_db

AGREEMENT = reverse("metaeval:index") + "?qrels_a=nist&qrels_b=umbrela-fake&threshold=1"


@pytest.fixture
def judged(pool):
    """The pool (tests/relevance/conftest.py), every segment graded by NIST; UMBRELA fails on s3, without text."""
    for docid, grade in (("s1#0", 2), ("s2#0", 0), ("s3#0", 1)):
        make_qrel(pool, Segment.objects.get(docid=docid), grade, source="nist")
    return pool


def agreement_page(client) -> str:
    client.force_login(make_user(Role.ORGANIZER))
    response = client.get(AGREEMENT)
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def export(source: str, *options: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("export_qrels", "--source", source, *options, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_failed_umbrela_job_is_partial_on_the_qrels_agreement_and_export_until_resumed(client, llm_server, judged):
    job = umbrela_job_create(name="umbrela-fake")
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items, job.total_items) == ("failed", 2, 1, 3)
    partial = (
        f"Partial: job {job.pk} failed on 1 of 3 items; the qrels 'umbrela-fake' hold only the grades it made "
        "until it is resumed."
    )
    page = agreement_page(client)
    assert "Graded only by a: 1; only by b: 0." in page  # the section is shown, over s1 and s2
    assert f'<ul class="source-notes"><li>{partial}</li></ul>' in page
    lines, warnings = export("umbrela-fake")
    assert lines == "t3 Q0 s1#0 1\nt3 Q0 s2#0 0\n"  # what it graded counts
    assert warnings == f"warning: {partial}\n"
    assert export("nist") == ("t3 Q0 s1#0 2\nt3 Q0 s2#0 0\nt3 Q0 s3#0 1\n", "")  # a file's qrels: no note
    out, err = io.StringIO(), io.StringIO()
    call_command("qrels_agreement", "--a", "nist", "--b", "umbrela-fake", "--json", stdout=out, stderr=err)
    assert err.getvalue() == f"warning: {partial}\n" and json.loads(out.getvalue())["notes"] == [partial]

    # Resumed: running again, its grades are provisional until it finishes.
    Segment.objects.filter(docid="s3#0").update(text="Zebra stripes differ on every zebra.")
    assert job_reopen(job.pk) == 1
    running = f"Job {job.pk} still writes into the qrels 'umbrela-fake': its grades are "
    assert f"<li>{running}not counted until it finishes.</li>" in agreement_page(client)
    assert export("umbrela-fake") == ("", f"warning: {running}not counted until it finishes.\n")
    lines, warnings = export("umbrela-fake", "--include-open")
    assert (lines, warnings) == ("t3 Q0 s1#0 1\nt3 Q0 s2#0 0\n", f"warning: {running}counted as provisional.\n")

    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.failed_items) == ("done", 0)
    page = agreement_page(client)
    assert "Graded only by a: 0; only by b: 0." in page
    assert "source-notes" not in page.split('id="qrels-agreement"', 1)[1]
    lines, warnings = export("umbrela-fake")
    assert lines.startswith("t3 Q0 s1#0 1\nt3 Q0 s2#0 0\nt3 Q0 s3#0 ")
    assert warnings == ""
