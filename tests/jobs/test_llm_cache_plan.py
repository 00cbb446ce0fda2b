"""The cache's look-up stays one index range on a calls table that grew without fresh statistics.

A long job writes tens of thousands of calls; where autovacuum is off or behind, PostgreSQL plans the
look-up on statistics from when the table was small. The (cache_key, id) index gives the first usable
answer in order: no sort, and never a walk of the primary key or the table filtering every row.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assessor.jobs.llm.cache import cache_lookup
from assessor.jobs.llm.prompts import prompt_template_get
from assessor.models import LLMCall

pytestmark = pytest.mark.django_db

ROWS = 20_000
# A call's messages as a job's are: a prompt of a passage and its nuggets, some kilobytes.
MESSAGES = [{"role": "user", "content": "A passage and its nuggets. " * 80}]


def _calls_written_without_statistics() -> None:
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


def test_a_miss_reads_the_key_index_not_the_table():
    if connection.vendor != "postgresql":
        pytest.skip("the plan is PostgreSQL's (DATABASE_URL selects it)")
    _calls_written_without_statistics()
    with CaptureQueriesContext(connection) as queries:
        assert cache_lookup("f" * 64) is None
    assert cache_lookup(f"{123:064x}") == "[]"
    (looked,) = queries.captured_queries
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN {looked['sql']}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "llm_call_cache_key_id" in plan, plan
    assert "pkey" not in plan and "Seq Scan" not in plan and "Sort" not in plan, plan
