"""A stale or partly reopened condition is flagged wherever its scores are printed: the meta-evaluation,
describe and calibrate commands warn on standard error, the calibration page lists it, and the qrels
agreement counts a running job's grades only when asked to."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from assessor.models import Job, LabelSource, Qrel, QrelSource
from assessor.work.roles import Role
from relevance import kinds as relevance_kinds
from tests.builders import (
    make_answer,
    make_assignment_label,
    make_nugget_set,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    make_user,
    nuggets_of,
    source_of,
)

pytestmark = pytest.mark.django_db

LABELS = ["support", "partial_support", "not_support"]


@pytest.fixture
def stale_condition() -> str:
    """Two conditions on one nugget set, people's imported 'manual' and the LLM 'gpt', the LLM's stale on a topic.

    Returns the note every output must carry.
    """
    source_of("assignment", "gpt", kind=LabelSource.Kind.LLM, model="model-one")
    topics = [make_topic(), make_topic()]
    runs = [make_run() for _ in range(3)]
    for topic in topics:
        nuggets = nuggets_of(make_nugget_set(topic, texts=["first fact", "second fact"]))
        for index, run in enumerate(runs):
            answer = make_answer(run, topic)
            for position, nugget in enumerate(nuggets):
                make_assignment_label(answer, nugget, LABELS[(index + position) % 3], assigner="manual")
                make_assignment_label(answer, nugget, LABELS[index % 3], assigner="gpt", kind="auto")
    changed = nuggets_of(topics[0].nugget_sets.get())[1]
    LabelSource.objects.filter(name="gpt").update(stale={"auto_edit": {topics[0].pk: [changed.pk]}})
    return (
        f"Stale: the nugget lists of 1 topic(s) ({topics[0].pk}) changed since 'gpt' labelled them; "
        "re-run the affected items."
    )


def run_command(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_metaeval_command_warns_of_a_stale_source(stale_condition):
    out, err = run_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/gpt", "--bootstrap", "0")
    assert "Vstrict" in out
    assert f"warning: {stale_condition}" in err
    _, err = run_command("metaeval", "--a", "auto_edit/manual", "--b", "auto_edit/gpt", "--bootstrap", "0", "--json")
    assert f"warning: {stale_condition}" in err


def test_the_describe_command_warns_of_a_stale_source(stale_condition):
    out, err = run_command("describe", "auto_edit/manual", "auto_edit/gpt")
    assert "auto_edit/gpt" in out
    assert err.count(stale_condition) == 1


def test_a_source_with_nothing_pending_gets_no_warning(stale_condition):
    _, err = run_command("describe", "auto_edit/manual")
    assert err == ""


def test_the_calibrate_command_and_page_flag_a_stale_llm_source(stale_condition, client):
    out, err = run_command("calibrate", "--llm", "auto_edit/gpt", "--human", "auto_edit/manual")
    assert "estimate" in out
    assert f"warning: {stale_condition}" in err
    client.force_login(make_user(Role.ORGANIZER))
    page = client.get(
        reverse("metaeval:calibrate"), {"llm": "auto_edit/gpt", "human": "auto_edit/manual", "metric": "Vstrict"}
    ).content.decode()
    assert 'id="calibrated"' in page
    assert "Stale: the nugget lists of 1 topic(s)" in page and "re-run the affected items" in page


def test_the_qrels_agreement_counts_a_running_job_only_when_asked():
    topic = make_topic()
    segments = [make_segment() for _ in range(2)]
    for segment in segments:
        make_qrel(topic, segment, grade=2, source="nist")
    job = Job.objects.create(kind=relevance_kinds.UMBRELA, output_name="umb", model="m", status=Job.Status.RUNNING)
    source = QrelSource.objects.create(name="umb", job=job, source=source_of("qrels", "umb", kind="llm"))
    for segment in segments:
        Qrel.objects.create(source=source, topic=topic, segment=segment, grade=2, job=job)
    out, _ = run_command("qrels_agreement", "--a", "nist", "--b", "umb", "--include-open")
    assert "graded only by a: 0; only by b: 0" in out
    out, _ = run_command("qrels_agreement", "--a", "nist", "--b", "umb")
    assert "graded only by a: 2; only by b: 0" in out
