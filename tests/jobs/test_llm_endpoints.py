"""Named LLM endpoints: two endpoints, two local servers; each job's calls, key, model, limit and prices are its endpoint's."""

import threading
import time
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections

from assessor.jobs.engine import JobRequestInvalid, job_cancel, job_run_sync
from assessor.jobs.llm.client import LLMNotConfigured, LLMSession
from assessor.jobs.llm.concurrency import slot_pool
from assessor.jobs.llm.endpoints import endpoint_config, endpoint_missing
from assessor.jobs.llm.prompts import prompt_template_get
from assessor.models import Job, LabelSource
from assignment.auto import auto_assign_job_create, auto_assign_rerun_create
from assignment.models import AssignmentLabel
from nuggets.models import Nugget
from tests.builders import make_answer, make_nugget_set, make_run, make_topic
from tests.llm_server import FLIPPED, expected_assign
from tests.services import redis_slots

NUGGETS = ["Paris is the capital", "zebras have stripes", "the Eiffel tower is tall"]
ANSWERS = [
    "Paris is the capital of France.",
    "Zebras live in Africa; the capital is Paris.",
    "Nothing here matches at all.",
]


@pytest.fixture
def answers(db):
    topic = make_topic("t1", query="capital of France")
    make_nugget_set(topic, texts=NUGGETS, kind="manual", name="manual")
    return [make_answer(make_run(f"run{i}"), topic, [(text, [])]) for i, text in enumerate(ANSWERS)]


def labels_of(assigner: str) -> dict[tuple[str, str], str]:
    rows = AssignmentLabel.objects.filter(assigner=assigner).values_list("answer__run__run_id", "nugget__text", "label")
    return {(run, nugget): label for run, nugget, label in rows}


def prompt_words(server) -> int:
    """The input tokens the server counted: the words of every message it was sent."""
    return sum(len(str(m["content"]).split()) for body in server.requests for m in body["messages"])


def test_each_jobs_calls_go_to_its_own_endpoints_server(two_llm_endpoints, answers):
    alpha, beta = two_llm_endpoints["alpha"], two_llm_endpoints["beta"]
    job_a = auto_assign_job_create(nuggets="manual", name="by-alpha", endpoint="alpha")
    job_b = auto_assign_job_create(nuggets="manual", name="by-beta", endpoint="beta")
    job_run_sync(job_a.pk)
    job_run_sync(job_b.pk)
    job_a.refresh_from_db()
    job_b.refresh_from_db()
    assert (job_a.status, job_b.status) == ("done", "done")
    # One call per answer (3 nuggets fit one batch), each to its endpoint's server, model and key.
    assert alpha.count == job_a.calls == 3 and beta.count == job_b.calls == 3
    assert {body["model"] for body in alpha.requests} == {"model-alpha"}
    assert {body["model"] for body in beta.requests} == {"model-beta"}
    assert set(alpha.api_keys) == {"key-of-alpha"} and set(beta.api_keys) == {"key-of-beta"}
    assert (job_a.endpoint_name, job_a.model, job_a.endpoint) == ("alpha", "model-alpha", alpha.url)
    assert (job_b.endpoint_name, job_b.model, job_b.endpoint) == ("beta", "model-beta", beta.url)
    # The labels are each server's: alpha's by the rule, beta's turned round.
    expected = {(f"run{i}", n): expected_assign(n, text) for i, text in enumerate(ANSWERS) for n in NUGGETS}
    assert labels_of("by-alpha") == expected
    assert labels_of("by-beta") == {key: FLIPPED[label] for key, label in expected.items()}
    # Each source records the endpoint and model behind it.
    sources = LabelSource.objects.filter(family="assignment", name__in=["by-alpha", "by-beta"]).order_by("name")
    assert [(s.name, s.kind, s.endpoint_name, s.model, s.endpoint) for s in sources] == [
        ("by-alpha", "llm", "alpha", "model-alpha", alpha.url),
        ("by-beta", "llm", "beta", "model-beta", beta.url),
    ]


def test_the_cost_is_counted_at_the_endpoints_prices(two_llm_endpoints, answers):
    alpha, beta = two_llm_endpoints["alpha"], two_llm_endpoints["beta"]
    for name, endpoint in (("by-alpha", "alpha"), ("by-beta", "beta")):
        job_run_sync(auto_assign_job_create(nuggets="manual", name=name, endpoint=endpoint).pk)
    job_a, job_b = Job.objects.get(output_name="by-alpha"), Job.objects.get(output_name="by-beta")
    assert job_a.tokens_in == prompt_words(alpha) and job_b.tokens_in == prompt_words(beta)
    # US dollars per million tokens: alpha 1 in, 2 out; beta 3 in, 5 out (the default's would be 2 and 8).
    assert job_a.cost == Decimal(job_a.tokens_in * 1 + job_a.tokens_out * 2) / 1_000_000
    assert job_b.cost == Decimal(job_b.tokens_in * 3 + job_b.tokens_out * 5) / 1_000_000


def test_a_jobs_cost_is_the_exact_sum_of_its_calls_rounded_once(two_llm_endpoints, answers, settings):
    # Prices with which each call costs a fraction of a micro-dollar: rounding every call would lose it all.
    settings.LLM_PRICE_INPUT, settings.LLM_PRICE_OUTPUT = 0.002, 0.1
    job = auto_assign_job_create(nuggets="manual", name="by-default")
    job_run_sync(job.pk)
    job.refresh_from_db()
    server = two_llm_endpoints["alpha"]  # the default endpoint's server
    calls = [
        (sum(len(str(m["content"]).split()) for m in body["messages"]), 3)  # the server answers three words
        for body in server.requests
    ]
    assert (job.tokens_in, job.tokens_out) == (sum(n for n, _ in calls), sum(n for _, n in calls))
    # In thousandths of a micro-dollar: 2 per token in, 100 per token out.
    exact = Decimal(sum(2 * tokens_in + 100 * tokens_out for tokens_in, tokens_out in calls)) / 10**9
    assert job.cost == exact.quantize(Decimal("0.000001"))
    assert job.cost_picodollars == int(exact * 10**12)
    rounded_each = sum(
        (Decimal(2 * tokens_in + 100 * tokens_out) / 10**9).quantize(Decimal("0.000001"))
        for tokens_in, tokens_out in calls
    )
    assert rounded_each != job.cost  # the figure the per-call rounding gave


def test_without_an_endpoint_a_job_uses_the_llm_variables(two_llm_endpoints, answers):
    job = auto_assign_job_create(nuggets="manual", name="by-default")
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.endpoint_name, job.model, job.status) == ("default", "fake-model", "done")
    assert {body["model"] for body in two_llm_endpoints["alpha"].requests} == {"fake-model"}
    assert two_llm_endpoints["beta"].count == 0


def test_a_name_another_endpoint_or_model_owns_is_refused(two_llm_endpoints, answers):
    first = auto_assign_job_create(nuggets="manual", name="shared", endpoint="alpha")
    with pytest.raises(
        JobRequestInvalid, match=rf"Job {first.pk} \(model-alpha of the endpoint 'alpha'\) already produces"
    ):
        auto_assign_job_create(nuggets="manual", name="shared", endpoint="beta")
    # Cancelled before it wrote anything, the job still owns the name's source.
    job_cancel(first.pk)
    with pytest.raises(
        JobRequestInvalid,
        match=rf"'shared' holds the labels of the LLM model-alpha of the endpoint 'alpha' \(job {first.pk}\): "
        "a job of model-beta of the endpoint 'beta' cannot write into it",
    ):
        auto_assign_job_create(nuggets="manual", name="shared", endpoint="beta")
    assert Job.objects.filter(output_name="shared").count() == 1


def test_the_same_model_at_another_endpoint_is_another_source(two_llm_endpoints, answers, settings):
    settings.LLM_ENDPOINTS["alpha-copy"] = {**settings.LLM_ENDPOINTS["alpha"]}
    first = auto_assign_job_create(nuggets="manual", name="shared", endpoint="alpha")
    job_cancel(first.pk)
    with pytest.raises(JobRequestInvalid, match="a job of model-alpha of the endpoint 'alpha-copy' cannot write"):
        auto_assign_job_create(nuggets="manual", name="shared", endpoint="alpha-copy")


def test_labelling_stale_nuggets_again_goes_to_the_sources_endpoint(two_llm_endpoints, answers):
    job_run_sync(auto_assign_job_create(nuggets="manual", name="by-beta", endpoint="beta").pk)
    source = LabelSource.objects.get(family="assignment", name="by-beta")
    first = Nugget.objects.get(text=NUGGETS[0])
    # As a change of the nugget list leaves it: the first nugget's labels taken away, to be labelled again.
    AssignmentLabel.objects.filter(source=source, nugget=first).delete()
    LabelSource.objects.filter(pk=source.pk).update(stale={"manual": {"t1": [first.pk]}})
    two_llm_endpoints["beta"].reset()
    rerun = auto_assign_rerun_create(name="by-beta")
    assert (rerun.endpoint_name, rerun.model) == ("beta", "model-beta")
    job_run_sync(rerun.pk)
    assert Job.objects.get(pk=rerun.pk).status == "done"
    # One call per answer, for the one stale nugget, to beta's server and none to the default's.
    assert (two_llm_endpoints["beta"].count, two_llm_endpoints["alpha"].count) == (3, 0)
    relabelled = {key: label for key, label in labels_of("by-beta").items() if key[1] == NUGGETS[0]}
    assert relabelled == {
        (f"run{i}", NUGGETS[0]): FLIPPED[expected_assign(NUGGETS[0], t)] for i, t in enumerate(ANSWERS)
    }


def test_an_unknown_endpoint_or_an_unset_key_is_said_plainly(two_llm_endpoints, answers, monkeypatch):
    with pytest.raises(
        LLMNotConfigured, match="No LLM endpoint is named 'gamma'; the endpoints are: default, alpha, beta"
    ):
        endpoint_config("gamma")
    monkeypatch.delenv("BETA_KEY")
    assert endpoint_missing("beta") == (
        "The LLM endpoint 'beta' reads its key from the environment variable BETA_KEY, which is not set."
    )
    with pytest.raises(CommandError, match="environment variable BETA_KEY"):
        call_command("run_auto_assign", "--nuggets", "manual", "--name", "x", "--endpoint", "beta", "--sync")
    assert not Job.objects.exists()


def test_the_run_commands_take_an_endpoint(two_llm_endpoints, answers):
    out = StringIO()
    call_command(
        "run_auto_assign",
        *("--nuggets", "manual", "--name", "cmd-beta", "--endpoint", "beta", "--sync", "--threads", "1"),
        stdout=out,
    )
    job = Job.objects.get(output_name="cmd-beta")
    assert (job.endpoint_name, job.model, job.status) == ("beta", "model-beta", "done")
    assert two_llm_endpoints["beta"].count == 3 and two_llm_endpoints["alpha"].count == 0


def test_each_endpoint_has_its_own_slots(two_llm_endpoints, db):
    pools = {slot_pool(endpoint_config(name).endpoint) for name in ("default", "alpha", "beta")}
    assert len(pools) == 3


@pytest.mark.parametrize("backend", ["database", "redis"])
def test_the_concurrency_limit_holds_per_endpoint(two_llm_endpoints, transactional_db, settings, backend):
    """Alpha allows 1 call at a time and beta 3: six threads ask each at once; neither limit borrows from the other."""
    if backend == "redis":
        redis_slots(settings)
    elif connection.vendor == "sqlite" and connection.is_in_memory_db():
        pytest.skip("threads need a shared database file or PostgreSQL (set TEST_DATABASE_NAME)")
    alpha, beta = two_llm_endpoints["alpha"], two_llm_endpoints["beta"]
    alpha.latency = beta.latency = 0.3
    prompt = prompt_template_get("assign")
    configs = {name: endpoint_config(name) for name in ("alpha", "beta")}
    start = threading.Barrier(12)

    def ask(name: str, index: int) -> None:
        try:
            start.wait()
            # Distinct messages: no answer comes from the cache.
            LLMSession(config=configs[name]).ask(
                prompt, [{"role": "user", "content": f"question {index} for {name}"}], lambda raw: raw
            )
        finally:
            connections.close_all()

    both_in_flight = [0]
    asking = threading.Event()

    def watch() -> None:
        # Calls in flight at both servers at once: 4 when neither endpoint's slots are the other's.
        while not asking.is_set():
            both_in_flight[0] = max(both_in_flight[0], alpha.in_flight + beta.in_flight)
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    threads = [threading.Thread(target=ask, args=(name, i)) for name in configs for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    asking.set()
    watcher.join()
    assert (alpha.count, beta.count) == (6, 6)
    assert (alpha.max_in_flight, beta.max_in_flight) == (1, 3)
    assert both_in_flight[0] == 4
