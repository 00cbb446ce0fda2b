"""A job's page shows every call the job paid for over its whole life: the first run and the resume, the calls
of an item that failed and of one whose worker stopped in the middle, and the re-asks."""

import re

import pytest
from django.urls import reverse

from assessor.jobs import engine
from assessor.jobs.engine import job_reopen, job_run_sync
from assessor.models import LLMCall
from assignment.auto import auto_assign_job_create
from tests.jobs.launches import make_assign_setup
from tests.llm_server import Reply

pytestmark = pytest.mark.django_db

PRICE_INPUT, PRICE_OUTPUT = 2.0, 8.0  # US dollars per million tokens (tests.llm_server.llm_settings)


def shown_paid(organizer, job_id: int) -> tuple[int, int, int, str]:
    """(calls, tokens in, tokens out, dollars) as the job's page shows them."""
    page = organizer.get(reverse("jobs:detail", args=[job_id])).content.decode()
    found = re.search(r'<span id="paid">(\d+) calls · (\d+) tokens in, (\d+) out · \$([0-9.]+)</span>', page)
    assert found, page
    return int(found[1]), int(found[2]), int(found[3]), found[4]


def test_a_resumed_jobs_page_shows_every_call_it_paid(llm_server, organizer, settings, monkeypatch):
    settings.LLM_MAX_REASKS = 1
    # Twelve nuggets: two calls per answer (batches of ten).
    make_assign_setup(texts=[f"fact number {i} about zebras" for i in range(12)], answers=3)
    job = auto_assign_job_create(nuggets="manual", name="gpt")
    # The first answer's first batch is answered unusably, and so is its re-ask: the item fails after 2 calls.
    llm_server.script(Reply.unknown_label(), Reply.unknown_label())
    # The second answer's worker stops after its calls, before its item is written (a worker killed mid-item).
    finish = engine._item_finish

    def stopped_once(*args, **kwargs):
        monkeypatch.setattr(engine, "_item_finish", finish)
        raise SystemExit("the worker stopped")

    monkeypatch.setattr(engine, "_item_finish", stopped_once)
    with pytest.raises(SystemExit):
        job_run_sync(job.pk)
    job_run_sync(job.pk)  # the other workers go on: the third answer
    job.refresh_from_db()
    assert (job.done_items, job.failed_items) == (1, 1)
    # The resume redoes the failed answer and the one the stopped worker held (its answers come from the cache).
    assert job_reopen(job.pk) == 2
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items) == ("done", 3, 0)

    # Paid: 2 (the failed item) + 2 (the stopped worker's) + 2 (the third) + 2 (the failed item again).
    assert llm_server.count == 8
    paid = LLMCall.objects.filter(job=job, from_cache=False)
    assert paid.count() == llm_server.count
    tokens_in = sum(paid.values_list("tokens_in", flat=True))
    tokens_out = sum(paid.values_list("tokens_out", flat=True))
    dollars = (tokens_in * PRICE_INPUT + tokens_out * PRICE_OUTPUT) / 1_000_000
    assert shown_paid(organizer, job.pk) == (8, tokens_in, tokens_out, f"{dollars:.6f}")


def test_requests_that_could_not_be_sent_are_no_calls_on_the_page(llm_server, organizer, settings):
    make_assign_setup(answers=1)
    job = auto_assign_job_create(nuggets="manual", name="gpt")
    llm_server.stop()  # nothing listens at its address any more: no request reaches an endpoint
    job_run_sync(job.pk)
    job.refresh_from_db()
    assert job.failed_items == 1
    assert LLMCall.objects.filter(job=job).count() == settings.LLM_MAX_RETRIES + 1  # each attempt is logged
    assert shown_paid(organizer, job.pk) == (0, 0, 0, "0.000000")
