"""The job engine and the automatic jobs of nuggets, assignment and support, run in-process against the local test server."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from assessor.jobs.engine import (
    JobRequestInvalid,
    item_claim,
    item_process,
    job_cancel,
    job_reopen,
    job_run_sync,
)
from assessor.models import Job, JobItem, LLMAskInFlight, LLMCall, Qrel
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from bench.fake_llm import first_words
from nuggets.auto import auto_nuggets_job_create, vital_first
from nuggets.models import Nugget, NuggetSet
from support.auto import auto_support_job_create
from support.models import SupportLabel
from tests.builders import (
    make_answer,
    make_batch,
    make_nugget_set,
    make_qrel,
    make_run,
    make_segment,
    make_topic,
    source_of,
)
from tests.jobs.interrupted import run_stopped_before_its_end
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db


def expected_assign(nugget: str, passage: str) -> str:
    """The test server's assignment rule, recomputed here."""
    if nugget.lower() in passage.lower():
        return "support"
    words = lambda text: {w.lower().strip(".,") for w in text.split() if len(w.strip(".,")) >= 4}  # noqa: E731
    return "partial_support" if words(nugget) & words(passage) else "not_support"


# --- AutoAssign -----------------------------------------------------------------------


@pytest.fixture
def assign_setup():
    topic = make_topic("t1", query="capital of France")
    texts = [f"fact number {i} about zebras" for i in range(23)] + ["Paris is the capital"]
    make_nugget_set(topic, texts=texts, kind="manual", name="manual")
    answers = [
        make_answer(make_run(f"run{i}"), topic, [("Paris is the capital of France.", []), (f"Zebras fact {i}.", [])])
        for i in range(3)
    ]
    return topic, texts, answers


def test_auto_assign_labels_every_nugget_in_batches_of_ten(llm_server, assign_setup):
    topic, texts, answers = assign_setup
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    assert job.total_items == 3
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items) == ("done", 3, 0)
    # 24 nuggets: batches of 10, 10 and 4, for each of 3 answers.
    assert job.calls == 9 and llm_server.count == 9
    batch_sizes = sorted(
        len(json.loads(r["messages"][1]["content"].split("Nugget List: ")[1].split("\n")[0]))
        for r in llm_server.requests
    )
    assert batch_sizes == [4, 4, 4, 10, 10, 10, 10, 10, 10]
    labels = AssignmentLabel.objects.filter(assigner="auto-gpt")
    assert labels.count() == 72
    for label in labels.select_related("answer", "nugget"):
        assert label.label == expected_assign(label.nugget.text, label.answer.text)
        assert (label.job_id, label.assigner_kind, label.created_by_id, label.imported_from_id) == (
            job.pk,
            "auto",
            None,
            None,
        )
    assert job.prompt_versions == {"assign": 1}
    assert job.tokens_in > 0 and job.cost > 0


def test_a_failed_batch_fails_the_answer_keeping_the_raw_answer(llm_server, assign_setup, settings):
    settings.LLM_MAX_REASKS = 1
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", runs=["run0"])
    llm_server.script(Reply.literal('["support"]'), Reply.literal('["maybe"] * 10'))
    job_run_sync(job.pk)
    job.refresh_from_db()
    item = job.items.get()
    assert (job.status, job.failed_items, item.status) == ("failed", 1, "failed")
    assert item.raw_response == '["maybe"] * 10'
    assert "no usable answer after 2 asks" in item.error
    # Never a guessed label, never half an answer.
    assert not AssignmentLabel.objects.filter(assigner="auto-gpt").exists()


def test_resuming_retries_failed_items_and_a_rerun_costs_no_calls(llm_server, assign_setup, settings):
    settings.LLM_MAX_REASKS = 0
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    llm_server.script(Reply.unknown_label())
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.done_items, job.failed_items) == (2, 1)
    calls_before = llm_server.count
    assert job_reopen(job.pk) == 1
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items) == ("done", 3, 0)
    # Only the failed answer is asked again: its 3 batches (the first failed, the rest were never asked).
    assert llm_server.count == calls_before + 3
    assert AssignmentLabel.objects.filter(assigner="auto-gpt").count() == 72

    again = auto_assign_job_create(nuggets="manual", name="auto-gpt-again")
    job_run_sync(again.pk)
    again.refresh_from_db()
    assert (again.status, again.calls, llm_server.count) == ("done", 0, calls_before + 3)
    first = dict(AssignmentLabel.objects.filter(assigner="auto-gpt").values_list("id", "label"))
    second = AssignmentLabel.objects.filter(assigner="auto-gpt-again")
    assert sorted(second.values_list("label", flat=True)) == sorted(first.values())


def test_a_duplicated_task_does_not_redo_a_finished_item(llm_server, assign_setup):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", runs=["run0"])
    item = job.items.get()
    assert item_process(item.pk) == "done"
    assert item_process(item.pk) == "skipped"
    assert AssignmentLabel.objects.filter(assigner="auto-gpt").count() == 24
    assert llm_server.count == 3


def test_an_item_is_claimed_once(topic):
    job = Job.objects.create(kind="auto_assign", output_name="x", model="m")
    item = JobItem.objects.create(job=job, key="k", payload={"topic": topic.pk})
    assert item_claim(item.pk, worker="a") is True
    assert item_claim(item.pk, worker="b") is False
    item.refresh_from_db()
    assert (item.claimed_by, item.attempts) == ("a", 1)


def test_a_cancelled_job_claims_nothing_and_resumes(llm_server, assign_setup):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    assert job_cancel(job.pk)
    assert job_run_sync(job.pk) == {"done": 0, "failed": 0, "skipped": 3}
    job.refresh_from_db()
    assert (job.status, job.done_items, llm_server.count) == ("cancelled", 0, 0)
    assert job_reopen(job.pk) == 3
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items) == ("done", 3)


def test_a_resume_takes_back_an_item_a_dead_worker_claimed(llm_server, assign_setup):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", runs=["run0"])
    item = job.items.get()
    assert item_claim(item.pk, worker="dead-worker")
    assert job_run_sync(job.pk) == {"done": 0, "failed": 0, "skipped": 0}
    assert job_reopen(job.pk) == 1
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items) == ("done", 1)


def test_a_name_in_use_is_refused(llm_server, assign_setup):
    auto_assign_job_create(nuggets="manual", name="auto-gpt")
    with pytest.raises(JobRequestInvalid, match="already produces 'auto-gpt'"):
        auto_assign_job_create(nuggets="manual", name="auto-gpt")
    with pytest.raises(JobRequestInvalid, match="no nugget set named 'nope'"):
        auto_assign_job_create(nuggets="nope", name="other")
    with pytest.raises(JobRequestInvalid, match="unknown run"):
        auto_assign_job_create(nuggets="manual", name="other", runs=["missing"])


# --- AutoNuggets ------------------------------------------------------------------


@pytest.fixture
def nugget_topic():
    topic = make_topic("t2", query="zebra stripes")
    # 25 relevant passages, 2 irrelevant, 1 relevant without text.
    for i in range(25):
        make_qrel(
            topic,
            make_segment(f"doc{i:02d}#0", text=f"Zebra passage {i:02d} says {'stripes ' * (i % 3)}things here"),
            grade=1 + i % 3,
        )
    make_qrel(topic, make_segment("docx#0", text="not relevant at all"), grade=0)
    make_qrel(topic, make_segment("docy#0", text=""), grade=3)
    return topic


def expected_order(topic) -> list[str]:
    """Relevant passages with text, by decreasing grade then docid (the documented order)."""
    rows = Qrel.objects.filter(topic=topic, grade__gte=1).exclude(segment__text="")
    return [q.segment.text for q in sorted(rows, key=lambda q: (-q.grade, q.segment_id))]


def test_auto_nuggets_iterates_windows_labels_importance_and_keeps_twenty(llm_server, nugget_topic):
    job = auto_nuggets_job_create(name="auto", qrels="nist")
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert job.status == "done", job.items.get().error
    passages = expected_order(nugget_topic)
    nuggetize = [r for r in llm_server.requests if "NuggetizeLLM" in r["messages"][0]["content"]]
    importance = [r for r in llm_server.requests if "NuggetizeScoreLLM" in r["messages"][0]["content"]]
    # 25 passages: windows of 10, 10, 5; the second window starts from the first's list.
    assert len(nuggetize) == 3
    assert "[10] " + passages[9] in nuggetize[0]["messages"][1]["content"]
    assert "Initial Nugget List Length: 10" in nuggetize[1]["messages"][1]["content"]
    drafts = [first_words(text) for text in passages]  # the server's nuggets, capped at 30
    assert len(importance) == 3  # 25 nuggets: 10, 10, 5
    labelled = [(text, "vital" if len(text.split()) % 2 == 0 else "okay") for text in drafts]
    expected = [pair for pair in labelled if pair[1] == "vital"] + [pair for pair in labelled if pair[1] == "okay"]
    nugget_set = NuggetSet.objects.get(name="auto")
    stored = [(n.text, n.importance) for n in nugget_set.nuggets.order_by("position")]
    assert stored == expected[:20]
    assert (nugget_set.kind, nugget_set.job_id) == ("auto", job.pk)
    assert set(Nugget.objects.filter(nugget_set=nugget_set).values_list("job_id", flat=True)) == {job.pk}


def test_vital_first_is_stable():
    pairs = [("a", "okay"), ("b", "vital"), ("c", "okay"), ("d", "vital")]
    assert vital_first(pairs, keep=3) == [("b", "vital"), ("d", "vital"), ("a", "okay")]


def test_drafts_stop_at_creation_without_importance(llm_server, nugget_topic):
    job = auto_nuggets_job_create(name="drafts", qrels="nist", drafts=True)
    job_run_sync(job.pk)
    nugget_set = NuggetSet.objects.get(name="drafts")
    assert nugget_set.kind == "draft"
    assert nugget_set.nuggets.count() == 25
    assert set(nugget_set.nuggets.values_list("importance", flat=True)) == {""}
    assert not any("NuggetizeScoreLLM" in r["messages"][0]["content"] for r in llm_server.requests)


def test_a_too_long_nugget_list_is_reasked_not_cut(llm_server, nugget_topic, settings):
    settings.LLM_MAX_REASKS = 0
    llm_server.script(Reply.literal(json.dumps([f"nugget {i}" for i in range(31)])))
    job = auto_nuggets_job_create(name="auto", qrels="nist")
    job_run_sync(job.pk)
    item = job.items.get()
    assert item.status == "failed" and "31 nuggets" in item.error
    assert not NuggetSet.objects.filter(name="auto").exists()


def test_auto_nuggets_reads_the_chosen_qrels_source(llm_server, nugget_topic):
    with pytest.raises(JobRequestInvalid, match="no qrels source named 'umbrela'"):
        auto_nuggets_job_create(name="auto", qrels="umbrela")


# --- support --------------------------------------------------------------------------


def test_auto_support_judges_first_citations_only(llm_server, cited_answer):
    topic, answer = cited_answer
    job = auto_support_job_create(name="auto-support")
    job_run_sync(job.pk)
    labels = {
        label.citation.sentence.index: label.label
        for label in SupportLabel.objects.filter(method="auto-support").select_related("citation__sentence")
    }
    assert labels == {0: 2, 1: 1, 2: 0, 4: -1}
    assert llm_server.count == 3
    assert set(SupportLabel.objects.values_list("citation__position", flat=True)) == {0}
    assert set(SupportLabel.objects.values_list("job_id", "method_kind")) == {(job.pk, "auto")}


def test_auto_support_says_how_many_of_an_answers_calls_follow_each_ask(llm_server, cited_answer, slot_asks):
    """Three first citations with a passage (the fourth has none, and no call): 2, 1 and 0 calls after each."""
    job_run_sync(auto_support_job_create(name="auto-support").pk)
    assert slot_asks == [2, 1, 0]
    assert llm_server.count == 3


# --- commands -------------------------------------------------------------------------


def test_commands_run_in_process_with_sync(llm_server, assign_setup):
    out = StringIO()
    call_command(
        "run_auto_assign",
        "--nuggets",
        "manual",
        "--runs",
        "run0",
        "run1",
        "--name",
        "cmd",
        "--sync",
        "--threads",
        "1",
        stdout=out,
    )
    job = Job.objects.get(output_name="cmd")
    assert f"job {job.pk}:" in out.getvalue()
    assert f"job {job.pk} done: 2/2 items (0 failed), 6 calls" in out.getvalue()
    assert AssignmentLabel.objects.filter(assigner="cmd").count() == 48


def test_commands_say_what_to_set_without_an_llm(settings, assign_setup):
    settings.LLM_MODEL = ""
    settings.LLM_BASE_URL = ""
    settings.LLM_API_KEY = ""
    for command, args in [
        ("run_auto_assign", ["--nuggets", "manual"]),
        ("run_auto_nuggets", []),
        ("run_auto_support", []),
        ("run_umbrela", []),
    ]:
        with pytest.raises(CommandError, match="No LLM is configured. Set LLM_MODEL"):
            call_command(command, *args, "--name", "x", "--sync")
    assert not Job.objects.exists()


def test_command_errors_are_clear(llm_server, assign_setup):
    with pytest.raises(CommandError, match="unknown topic"):
        call_command("run_auto_assign", "--nuggets", "manual", "--topics", "nope", "--name", "x", "--sync")


def test_each_call_is_logged_against_the_job_and_item(llm_server, assign_setup):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", runs=["run0"])
    job_run_sync(job.pk)
    item = job.items.get()
    assert LLMCall.objects.filter(job=job, item=item, prompt__name="assign").count() == 3


def test_a_result_that_cannot_be_stored_fails_the_item(llm_server, assign_setup):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", runs=["run0"])
    # Someone stores a label of the same assigner meanwhile: the job must not write over it.
    answer = job.items.get().payload["answer"]
    nugget = Nugget.objects.filter(nugget_set__name="manual").first()
    AssignmentLabel.objects.create(
        answer_id=answer,
        nugget=nugget,
        assigner="auto-gpt",
        source=source_of("assignment", "auto-gpt"),
        assigner_kind="auto",
        label="support",
        imported_from=make_batch(),
    )
    assert job_run_sync(job.pk) == {"done": 0, "failed": 1, "skipped": 0}
    item = job.items.get()
    assert item.status == "failed" and "could not store the result" in item.error
    assert AssignmentLabel.objects.filter(assigner="auto-gpt").count() == 1
    job.refresh_from_db()
    assert (job.status, job.failed_items, job.calls) == ("failed", 1, 3)
    # The three calls' logs, whose rows went with the refused statement on PostgreSQL, are written all the same,
    # and every ask let go of its key.
    assert LLMCall.objects.filter(job=job, from_cache=False, parsed_ok=True).count() == 3 == llm_server.count
    assert not LLMAskInFlight.objects.exists()


@pytest.mark.skipif(connection.vendor == "sqlite", reason="threads writing at once need PostgreSQL (set DATABASE_URL)")
@pytest.mark.django_db(transaction=True)
def test_runs_repeating_one_answer_pay_its_calls_once_when_worked_at_once(llm_server):
    topic = make_topic("t1", query="capital of France")
    make_nugget_set(topic, texts=[f"fact number {i} about zebras" for i in range(14)], kind="manual", name="manual")
    for i in range(4):
        make_answer(make_run(f"run{i}"), topic, [("Paris is the capital of France.", [])])
    llm_server.latency = 0.3
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    assert job_run_sync(job.pk, threads=4) == {"done": 4, "failed": 0, "skipped": 0}
    job.refresh_from_db()
    # Four answers alike, 14 nuggets in batches of 10 and 4: two distinct prompts, asked once each.
    assert llm_server.count == 2 and job.calls == 2
    assert AssignmentLabel.objects.filter(assigner="auto-gpt").count() == 4 * 14


def test_a_resume_ends_a_job_whose_worker_stopped_between_its_last_item_and_its_end(llm_server, assign_setup):
    from assessor.models import KeptAnswerScore

    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    # The worker that finished the last item stops before the job's end: every item done, the job still running,
    # and its labels not counted.
    assert run_stopped_before_its_end(job.pk) == {"done": 3, "failed": 0, "skipped": 0}
    job.refresh_from_db()
    assert (job.status, job.done_items) == ("running", 3)
    assert not KeptAnswerScore.objects.filter(source__name__contains="auto-gpt").exists()
    calls = llm_server.count
    assert calls == 3 * 3  # 24 nuggets an answer, in batches of 10

    assert job_reopen(job.pk) == 0  # nothing to queue
    job.refresh_from_db()
    assert job.status == "done"
    # Its labels count now: a kept score for each of its three answers.
    assert KeptAnswerScore.objects.filter(source__name__contains="auto-gpt").count() == 3
    assert llm_server.count == calls


def test_a_resume_leaves_a_done_job_as_it_is_and_ends_one_cancelled_once_its_items_had_finished(
    llm_server, assign_setup
):
    from assessor.models import KeptAnswerScore

    done = auto_assign_job_create(nuggets="manual", name="auto-done", runs=["run0"])
    job_run_sync(done.pk)
    # Left running by its last item's worker, then cancelled to be resumed from its page (which offers no Resume
    # while a job runs): its labels do not count.
    cancelled = auto_assign_job_create(nuggets="manual", name="auto-cancelled", runs=["run1"])
    run_stopped_before_its_end(cancelled.pk)
    assert job_cancel(cancelled.pk)
    assert not KeptAnswerScore.objects.filter(source__name__contains="auto-cancelled").exists()
    for job in (done, cancelled):
        out = StringIO()
        call_command("run_auto_assign", "--resume", str(job.pk), stdout=out)
        assert f"job {job.pk}: nothing left to do: it is done" in out.getvalue()
        job.refresh_from_db()
        assert job.status == "done"
    assert KeptAnswerScore.objects.filter(source__name__contains="auto-cancelled").count() == 1
