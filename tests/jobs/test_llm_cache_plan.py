"""The answer cache on a calls table that grew without fresh statistics (PostgreSQL).

A long job writes tens of thousands of calls; where autovacuum is off or behind, PostgreSQL plans the
cache's look-up on statistics from when the table was small. Asked for the first answer "ORDER BY id
LIMIT 1", it walked the primary key in order and filtered every row on a miss: the look-up takes every
usable answer of the key from its index instead and keeps the first, and a long job analyzes the table
as it goes.
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from assessor.jobs import engine
from assessor.jobs.engine import job_run_sync
from assessor.jobs.llm.cache import cache_lookup
from assessor.jobs.llm.inflight import ask_look_and_claim, asks_look_and_claim
from assessor.jobs.llm.prompts import prompt_template_get
from assessor.models import LLMCall
from assessor.models.jobs import LLMAskInFlight
from assignment.auto import auto_assign_job_create
from tests.builders import make_answer, make_nugget_set, make_run, make_topic

pytestmark = pytest.mark.django_db

ROWS = 20_000
# A call's messages as a job's are: a prompt of a passage and its nuggets, some kilobytes.
MESSAGES = [{"role": "user", "content": "A passage and its nuggets. " * 80}]


def postgresql_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("planner statistics are PostgreSQL's (DATABASE_URL selects it)")


def estimated_rows(table: str) -> float:
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE relname = %s", [table])
        return cursor.fetchone()[0]


def test_the_first_usable_answer_of_a_key_is_served():
    prompt = prompt_template_get("assign")
    row = dict(prompt=prompt, model="m", messages=[], cache_key="k" * 64)
    LLMCall.objects.create(**row, raw_response="unusable", parsed_ok=False)
    first = LLMCall.objects.create(**row, raw_response="first", parsed_ok=True)
    LLMCall.objects.create(**row, raw_response="served from the cache", parsed_ok=True, from_cache=True)
    LLMCall.objects.create(**row, raw_response="second", parsed_ok=True)
    assert first.pk and cache_lookup("k" * 64) == "first"
    assert cache_lookup("x" * 64) is None


def test_a_miss_never_walks_the_primary_key():
    postgresql_only()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE assessor_llmcall")  # empty: the statistics of a fresh database
    prompt = prompt_template_get("assign")
    LLMCall.objects.bulk_create(
        (
            LLMCall(
                prompt=prompt, model="m", messages=MESSAGES, raw_response="[]", cache_key=f"{n:064x}", parsed_ok=True
            )
            for n in range(ROWS)
        ),
        batch_size=2000,
    )
    with CaptureQueriesContext(connection) as queries:
        assert cache_lookup("f" * 64) is None
    assert cache_lookup(f"{123:064x}") == "[]"
    with CaptureQueriesContext(connection) as claims:
        look = ask_look_and_claim("e" * 64, holder="me", lease=60)
        looks = asks_look_and_claim(["d" * 64, f"{124:064x}"], holders=["me", "me too"], lease=60)
    assert (look.answer, look.claimed) == (None, True)
    assert [(look.answer, look.claimed) for look in looks] == [(None, True), ("[]", False)]
    assert ask_look_and_claim(f"{123:064x}", holder="me", lease=60).answer == "[]"
    # The look alone, and the look that claims in the same statement (EXPLAIN plans it without running it).
    for looked in (*queries.captured_queries, *claims.captured_queries):
        with connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN {looked['sql']}")
            plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "pkey" not in plan, plan


def test_a_long_job_analyzes_its_calls_as_it_goes(llm_server, monkeypatch, django_capture_on_commit_callbacks):
    postgresql_only()
    topic = make_topic("t1", query="capital of France")
    make_nugget_set(topic, texts=["Paris is the capital"], kind="manual", name="manual")
    for i in range(5):
        make_answer(make_run(f"run{i}"), topic, [("Paris is the capital of France.", [])])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE assessor_llmcall")  # empty
    assert estimated_rows("assessor_llmcall") == 0
    monkeypatch.setattr(engine, "CALLS_ANALYZE_EVERY", 3)
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    with django_capture_on_commit_callbacks() as after_commits:
        job_run_sync(job.pk)
    assert LLMCall.objects.filter(job=job).count() == 5
    # Due once, when the third of the five items finished; run here after the fact (the test's transaction never
    # commits), it counts the rows only an ANALYZE inside this transaction can see.
    analyses = [callback for callback in after_commits if callback is engine._calls_analyze]
    assert len(analyses) == 1
    analyses[0]()
    assert estimated_rows("assessor_llmcall") == 5


def test_several_keys_are_looked_at_and_claimed_in_one_statement_each_as_one_alone_would_be():
    """A key with a usable answer (served, not claimed), a free key (claimed), a key another holder claims with a
    lease still running (neither), and one whose lease ran out (claimed, and looked at again before sending)."""
    postgresql_only()
    prompt = prompt_template_get("assign")
    LLMCall.objects.create(
        prompt=prompt, model="m", messages=[], cache_key="a" * 64, raw_response="kept", parsed_ok=True
    )
    now = timezone.now()
    LLMAskInFlight.objects.create(cache_key="c" * 64, holder="another", lease_until=now + timedelta(minutes=1))
    LLMAskInFlight.objects.create(cache_key="d" * 64, holder="a dead one", lease_until=now - timedelta(minutes=1))
    keys = ["a" * 64, "b" * 64, "c" * 64, "d" * 64]
    with CaptureQueriesContext(connection) as queries:
        looks = asks_look_and_claim(keys, holders=["h1", "h2", "h3", "h4"], lease=60)
    assert len(queries.captured_queries) == 1
    assert [(look.answer, look.claimed, look.recheck) for look in looks] == [
        ("kept", False, False),
        (None, True, False),
        (None, False, False),
        (None, True, True),
    ]
    holders = dict(LLMAskInFlight.objects.values_list("cache_key", "holder"))
    assert holders == {"b" * 64: "h2", "c" * 64: "another", "d" * 64: "h4"}
    with pytest.raises(ValueError, match="must differ"):
        asks_look_and_claim(["e" * 64, "e" * 64], holders=["h5", "h6"], lease=60)
