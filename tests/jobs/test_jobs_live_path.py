"""What a job's item costs the database, and the shortcuts of the live path: one claim that reads the item, one read
of the answer and its nuggets, the call log's row and the ask's claim let go of in one statement (PostgreSQL), a
job's rows inserted as one JSON document (PostgreSQL), and an AutoAssign job's scope read from its items."""

import json
import os
import time
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessor.jobs.engine import item_process, job_run_sync, pending_item_ids
from assessor.jobs.llm.client import LLMConfig, _openai_client
from assessor.models import Job, JobItem, KeptAnswerScore, KeptRunScore, LLMAskInFlight, LLMCall, PromptTemplate
from assessor.models.rows import rows_insert
from assessor.registry import registry
from assessor.scoring import kept
from assignment.auto import auto_assign_job_create
from assignment.kinds import AUTO_ASSIGN
from assignment.models import AssignmentLabel
from assignment.selectors import condition_job_scope, nugget_scores_from_labels
from bench.llm_cpu import job_cpu_measure
from tests.builders import make_answer, make_nugget_set, make_run, make_topic

pytestmark = pytest.mark.django_db

POSTGRES = connection.vendor == "postgresql"


@pytest.fixture
def two_topics():
    answers = []
    runs = [make_run(f"run{i}") for i in range(3)]
    for topic_id in ("t1", "t2"):
        topic = make_topic(topic_id, query=f"query of {topic_id}")
        make_nugget_set(topic, texts=[f"{topic_id} fact {i} about zebras" for i in range(24)], name="manual")
        answers += [make_answer(run, topic, [(f"Zebras {topic_id} fact {i}.", [])]) for i, run in enumerate(runs)]
    return answers


def _statements(queries) -> list[str]:
    """The statements sent, less the savepoints of the test's own transaction and the concurrency limit's (its slots
    are rows here, where the tests run without Redis)."""
    return [
        q["sql"]
        for q in queries
        if not q["sql"].upper().startswith(("SAVEPOINT", "RELEASE SAVEPOINT")) and "llmslot" not in q["sql"]
    ]


def test_an_assign_item_sends_its_statements_and_no_more(llm_server, two_topics):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    first, second, *_ = pending_item_ids(job.pk)
    item_process(first)  # reads the job, its prompt version and its source once in this process
    with CaptureQueriesContext(connection) as queries:
        assert item_process(second) == "done"
    # 24 nuggets: 3 calls. Each, on PostgreSQL: the look in the cache that claims the key (nobody held it), which
    # also writes the log's row of the call before and lets go of its claim (the last call's go with the item's
    # finish). On SQLite: the look, the claim, a second look, the log's row and the claim let go of. Around them:
    # the claim of the item (reading it), one read of the answer and its nuggets, and the item's finish: its
    # update, its labels and the job's counts, in one statement on PostgreSQL and a transaction of three elsewhere.
    per_call = 1 if POSTGRES else 5
    finish = 1 if POSTGRES else 3
    assert len(_statements(queries.captured_queries)) == 1 + 1 + 3 * per_call + finish
    assert llm_server.count == 6
    assert LLMAskInFlight.objects.count() == 0  # every claim let go of
    assert LLMCall.objects.filter(job=job, from_cache=False, parsed_ok=True).count() == 6


def test_a_jobs_end_is_one_update_and_writes_its_new_sources_rows_without_reading_any(llm_server, two_topics):
    """The job's end, after its last item: its status in one UPDATE that also finds no item open, and its labels
    made to count in a source kept from now on, whose rows it only writes (there are none to read or take away)."""
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    *first, last = pending_item_ids(job.pk)
    for item_id in first:
        item_process(item_id)
    with CaptureQueriesContext(connection) as queries:
        assert item_process(last) == "done"
    ended = [q["sql"] for q in queries.captured_queries]
    finish = [sql for sql in ended if sql.startswith('UPDATE "assessor_job" SET status')]
    assert len(finish) == 1 and 'NOT EXISTS (SELECT 1 FROM "assessor_jobitem"' in finish[0]
    assert not [sql for sql in ended if sql.startswith('SELECT 1 AS "a" FROM "assessor_jobitem"')]
    assert not [sql for sql in ended if sql.startswith('SELECT "assessor_job"."kind" AS "kind" FROM')]  # returned by the UPDATE
    kept_tables = ('"assessor_keptanswerscore"', '"assessor_keptrunscore"')
    touched = [sql for sql in ended if any(table in sql for table in kept_tables)]
    if connection.vendor == "postgresql":
        # The answers' rows, the runs' rows and the source's new stamp in one statement.
        assert len(touched) == 1 and touched[0].startswith("WITH ")
        assert touched[0].count("INSERT INTO") == 2 and 'UPDATE "assessor_keptsource" SET topics' in touched[0]
    else:
        assert [sql.split(" ", 1)[0] for sql in touched] == ["INSERT", "INSERT"]
    job.refresh_from_db()
    assert job.status == "done"
    assert JobItem.objects.filter(job=job, status="done").count() == 6
    # What it kept is what the labels give, computed from them afresh.
    assert KeptAnswerScore.objects.filter(source__name="manual/auto-gpt").count() == 6
    assert KeptRunScore.objects.filter(source__name="manual/auto-gpt").count() == 3
    assert kept.kept_scores(family="conditions", columns=("manual", "auto-gpt")) == nugget_scores_from_labels(
        nuggets="manual", assigner="auto-gpt"
    )


def test_an_assign_item_whose_claim_was_taken_back_writes_no_label_and_counts_its_calls(
    llm_server, two_topics, monkeypatch
):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    first, second, *_ = pending_item_ids(job.pk)
    assert item_process(first) == "done"
    kind = registry.job_kinds[AUTO_ASSIGN]

    def taken_back_meanwhile(**kwargs):
        result = kind.compute(**kwargs)
        # A resume gave the item to another worker while its calls ran.
        JobItem.objects.filter(pk=second).update(claimed_by="another-worker")
        return result

    monkeypatch.setitem(registry.job_kinds, AUTO_ASSIGN, replace(kind, compute=taken_back_meanwhile))
    assert item_process(second) == "skipped"
    job.refresh_from_db()
    # Its three calls were made and paid; its labels are the other worker's to write.
    assert (job.done_items, job.calls, llm_server.count) == (1, 6, 6)
    assert set(AssignmentLabel.objects.filter(job=job).values_list("answer_id", flat=True)) == {
        JobItem.objects.get(pk=first).payload["answer"]
    }
    assert JobItem.objects.get(pk=second).status == "claimed"


def test_an_assign_item_whose_two_calls_are_alike_makes_the_second_from_the_first(llm_server):
    # Nuggets 10-19 repeat 0-9: the second window's prompt is the first's, which the item's own first call answered.
    topic = make_topic("t1", query="query of t1")
    make_nugget_set(topic, texts=[f"fact {i % 10} about zebras" for i in range(20)], name="manual")
    make_answer(make_run("run0"), topic, [("Zebras fact 3.", [])])
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.calls, llm_server.count) == ("done", 1, 1)
    log = LLMCall.objects.filter(job=job)
    assert (log.filter(from_cache=False).count(), log.filter(from_cache=True).count()) == (1, 1)
    labels = dict(AssignmentLabel.objects.filter(job=job).values_list("nugget__position", "label"))
    assert [labels[i] for i in range(10)] == [labels[i + 10] for i in range(10)]
    assert not LLMAskInFlight.objects.exists()


def test_the_labels_of_an_assign_job_are_those_the_server_gives(llm_server, two_topics):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.calls) == ("done", 6, 18)
    labels = AssignmentLabel.objects.filter(job=job).select_related("answer", "nugget")
    assert labels.count() == 6 * 24
    for label in labels:
        # The server's rule: a nugget whose text the answer holds is supported; these share words only.
        assert label.label == "partial_support"
        assert (label.assigner, label.assigner_kind, label.source.name) == ("auto-gpt", "auto", "auto-gpt")
    # Each answer's labels in its nuggets' order, against its own topic's nuggets.
    for answer in two_topics:
        texts = list(labels.filter(answer=answer).order_by("nugget__position").values_list("nugget__text", flat=True))
        assert texts == [f"{answer.topic_id} fact {i} about zebras" for i in range(24)]


def test_an_assign_jobs_scope_is_the_conditions_and_topics_of_its_labels(llm_server, two_topics):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", answers=[a.pk for a in two_topics[:4]])
    job_run_sync(job.pk)
    assert Job.objects.get(pk=job.pk).status == "done"
    # Read from the labels, independently: the (nugget set name, assigner) and the answers' topics.
    expected: dict[tuple[str, ...], set[str]] = {}
    for label in AssignmentLabel.objects.filter(job=job).select_related("nugget__nugget_set", "answer"):
        expected.setdefault((label.nugget.nugget_set.name, label.assigner), set()).add(label.answer.topic_id)
    assert expected == {("manual", "auto-gpt"): {"t1", "t2"}}
    assert dict(condition_job_scope(job.pk)) == expected


def test_many_rows_go_in_as_given(llm_server):
    # 17 columns x 5 rows: past the 50 parameters where PostgreSQL gets one JSON document.
    prompt = PromptTemplate.objects.create(name="probe", version=1, system="s", user="u", sha256="0" * 64)
    when = datetime(2026, 11, 26, 12, 0, 0, 123456, tzinfo=UTC)
    rows = [
        {
            "prompt_id": prompt.pk,
            "model": "m",
            "messages": [{"role": "user", "content": f'row {i}: "quoted", ü, \\ and\nnewline'}],
            "raw_response": "" if i % 2 else f"answer {i}",
            "tokens_in": i,
            "cost_picodollars": 10**15 + i,
            "cache_key": f"k{i}",
            "parsed_ok": bool(i % 2),
            "created_at": when,
        }
        for i in range(5)
    ]
    rows_insert(LLMCall, rows)
    stored = list(LLMCall.objects.filter(prompt=prompt).order_by("cache_key"))
    assert [call.cache_key for call in stored] == ["k0", "k1", "k2", "k3", "k4"]
    for i, call in enumerate(stored):
        assert call.messages == [{"role": "user", "content": f'row {i}: "quoted", ü, \\ and\nnewline'}]
        assert (call.raw_response, call.tokens_in, call.tokens_out, call.cost_picodollars) == (
            "" if i % 2 else f"answer {i}",
            i,
            0,
            10**15 + i,
        )
        assert (call.parsed_ok, call.from_cache, call.reached, call.error, call.job_id, call.created_at) == (
            bool(i % 2),
            False,
            True,
            "",
            None,
            when,
        )


def test_the_cpu_benchmark_times_the_client_on_every_request_the_server_got(llm_server, two_topics):
    # `bench_llm --cpu-only` splits an answer's CPU into the client's requests and the rest: every request the
    # server answered must have been timed, and the client's share can only be part of the whole.
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    figures = job_cpu_measure(job.pk, config=LLMConfig.from_settings())
    assert figures.items == 6
    assert figures.requests == llm_server.count == 6 * 3  # 24 nuggets an answer, 10 a call
    assert 0 < figures.client_cpu < figures.cpu
    assert Job.objects.get(pk=job.pk).done_items == 6
    # The client's own `post` again once measured.
    assert "post" not in vars(_openai_client(LLMConfig.from_settings()))


def test_the_cpu_benchmarks_profile_shows_the_items_and_the_jobs_end_apart(llm_server, two_topics):
    # `bench_llm --cpu-only --profile`: the end (its labels made to count in the kept scores) is profiled on its
    # own, so that its functions are not lost among the items' and the items' figures hold none of it.
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    figures = job_cpu_measure(job.pk, config=LLMConfig.from_settings(), profile=True)
    assert "scores_refresh_job" in figures.end_profile and "scores_refresh_job" not in figures.profile
    assert "item_compute" in figures.profile and "item_compute" not in figures.end_profile


def test_the_workers_of_the_llm_benchmark_time_the_client_on_every_request(llm_server, two_topics, tmp_path, monkeypatch):
    """bench_llm's workers (bench.client_timed) add up the CPU of the client's requests where they run, and write it
    out as they stop: every request the server answered is counted, and the client's share is part of the whole."""
    import openai

    from bench import client_timed

    monkeypatch.setattr(openai.OpenAI, "post", openai.OpenAI.post)  # put back after the test
    monkeypatch.setattr(client_timed, "_spent", {"cpu": 0.0, "requests": 0})
    monkeypatch.setenv("BENCH_CLIENT_CPU_DIR", str(tmp_path))
    client_timed._client_timed()
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    started = time.process_time()
    job_run_sync(job.pk)
    spent = time.process_time() - started
    client_timed._client_reported()
    timed = json.loads((tmp_path / f"{os.getpid()}.json").read_text())
    assert timed["requests"] == llm_server.count == 6 * 3
    assert 0 < timed["cpu"] < spent


def _nested_loops() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('enable_nestloop')")
        return cursor.fetchone()[0]


@pytest.mark.skipif(not POSTGRES, reason="the planner's settings are PostgreSQL's (set DATABASE_URL)")
def test_a_jobs_end_reads_its_labels_without_nested_loops_and_sets_the_planner_back(
    llm_server, two_topics, monkeypatch
):
    # The job's labels are rows the planner's statistics cannot know at its end: joined one at a time, 40,000 of
    # them took 0.4-0.5 s where hash joins took 0.07 s (bench_llm --cpu-only 2000).
    planned: list[str] = []
    refresh = kept._source_refresh

    def recorded(*args, **kwargs):
        planned.append(_nested_loops())
        return refresh(*args, **kwargs)

    monkeypatch.setattr(kept, "_source_refresh", recorded)
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    job_run_sync(job.pk)
    assert Job.objects.get(pk=job.pk).status == "done"
    assert planned and set(planned) == {"off"}
    assert _nested_loops() == "on"


@pytest.mark.skipif(not POSTGRES, reason="the planner's settings are PostgreSQL's (set DATABASE_URL)")
def test_a_jobs_end_that_fails_leaves_the_planner_as_it_was(llm_server, two_topics, monkeypatch):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    job_run_sync(job.pk)

    def failing(*args, **kwargs):
        assert _nested_loops() == "off"
        raise RuntimeError("the family failed")

    monkeypatch.setattr(kept, "_source_refresh", failing)
    with pytest.raises(RuntimeError, match="the family failed"):
        kept.scores_refresh_job(job.pk)
    assert _nested_loops() == "on"


def test_an_assign_item_says_how_many_of_its_calls_follow_each_ask(llm_server, two_topics, slot_asks):
    """24 nuggets: windows of 10, 10 and 4, asked one after the other; each ask waits for its slot saying how many
    calls of the item come after it (2, 1, 0), so that the process serves the first windows first."""
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    assert item_process(pending_item_ids(job.pk)[0]) == "done"
    assert slot_asks == [2, 1, 0]
    assert llm_server.count == 3


def test_an_ask_with_log_probabilities_does_not_keep_an_earlier_asks_calls_after(llm_server, slot_asks):
    from assessor.jobs.llm.client import LLMSession
    from assessor.jobs.llm.prompts import prompt_messages, prompt_template_get

    session = LLMSession(config=LLMConfig.from_settings())
    prompt = prompt_template_get("assign")

    def messages(fact: str) -> list[dict[str, str]]:
        return prompt_messages(prompt, n=1, query="zebras", passage=f"Zebras {fact}.", nuggets=f'["zebras {fact}"]')

    session.ask(prompt, messages("run"), str, calls_after=1)
    session.ask_scored(prompt, messages("graze"), str)
    assert slot_asks == [1, 0]
