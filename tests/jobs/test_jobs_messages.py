"""A job's items go to the workers several to a task message; each message claims pending items as it goes."""

import pytest

from assessor.jobs import engine
from assessor.jobs.engine import (
    ITEMS_PER_MESSAGE,
    ITEMS_TASK,
    item_claim,
    job_cancel,
    job_dispatch,
    job_items_continue,
    job_items_process,
)
from assessor.jobs.tasks import job_items_run
from assessor.models import Job, JobItem
from assessor.project.celery import app as celery_app
from assignment.auto import auto_assign_job_create
from assignment.models import AssignmentLabel
from tests.builders import make_answer, make_nugget_set, make_run, make_topic

pytestmark = pytest.mark.django_db

NUGGETS = 3  # one call an answer


@pytest.fixture
def answers():
    topic = make_topic("t1", query="capital of France")
    make_nugget_set(topic, texts=["Paris is the capital", "zebras stripe", "the Seine"], kind="manual", name="manual")
    return [make_answer(make_run(f"run{i}"), topic, [(f"Paris is the capital, fact {i}.", [])]) for i in range(5)]


def job_items() -> list[JobItem]:
    return list(JobItem.objects.order_by("id"))


def test_a_message_works_its_count_of_items_in_the_order_they_were_made(llm_server, answers):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    items = job_items()
    assert len(items) == 5

    assert job_items_process(job.pk, 2) == {"done": 2, "failed": 0, "skipped": 0}
    done = [item.pk for item in job_items() if item.status == JobItem.Status.DONE]
    assert done == [items[0].pk, items[1].pk]
    assert llm_server.count == 2

    assert job_items_process(job.pk, 2) == {"done": 2, "failed": 0, "skipped": 0}
    # The last message of a job finds one item left and stops there.
    assert job_items_process(job.pk, 2) == {"done": 1, "failed": 0, "skipped": 0}
    assert job_items_process(job.pk, 2) == {"done": 0, "failed": 0, "skipped": 0}
    job.refresh_from_db()
    assert (job.status, job.done_items, llm_server.count) == ("done", 5, 5)
    assert AssignmentLabel.objects.filter(assigner="auto-gpt").count() == 5 * NUGGETS


def test_a_message_passes_over_an_item_another_worker_holds(llm_server, answers):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    first = job_items()[0]
    assert item_claim(first.pk, worker="other")
    assert job_items_process(job.pk, 10) == {"done": 4, "failed": 0, "skipped": 0}
    first.refresh_from_db()
    assert (first.status, first.claimed_by) == ("claimed", "other")
    job.refresh_from_db()
    assert (job.status, job.done_items) == ("running", 4)


def test_a_message_of_a_cancelled_job_claims_nothing(llm_server, answers):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    assert job_cancel(job.pk)
    assert job_items_process(job.pk, 10) == {"done": 0, "failed": 0, "skipped": 0}
    assert llm_server.count == 0
    assert set(JobItem.objects.values_list("status", flat=True)) == {"pending"}


def test_an_item_that_raises_leaves_the_rest_of_its_message_worked(llm_server, answers, monkeypatch):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt")
    first = job_items()[0]
    store = engine.item_result_store

    def store_or_raise(job, item, **kwargs):
        if item.pk == first.pk:
            raise RuntimeError("the database went away")
        return store(job, item, **kwargs)

    monkeypatch.setattr(engine, "item_result_store", store_or_raise)
    assert job_items_process(job.pk, 10) == {"done": 4, "failed": 1, "skipped": 0}
    first.refresh_from_db()
    # Held as a task of its own would leave it, for a resume to take back.
    assert first.status == "claimed"
    assert JobItem.objects.filter(status="done").count() == 4


def _sent_recorded(monkeypatch, *, send: bool) -> list[tuple[str, list, dict | None, str | None]]:
    """Each task message sent from now on: its task, its arguments, its keyword arguments and its queue; sent on only
    with `send`."""
    sent: list[tuple[str, list, dict | None, str | None]] = []
    apply_async = celery_app.Task.apply_async

    def recorded(task, args=None, kwargs=None, **options):
        sent.append((task.name, list(args or []), kwargs, options.get("queue")))
        return apply_async(task, args, kwargs, **options) if send else None

    monkeypatch.setattr(celery_app.Task, "apply_async", recorded)
    return sent


def test_the_dispatch_sends_the_items_several_to_a_message(
    llm_server, answers, monkeypatch, django_capture_on_commit_callbacks
):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", queue="assessing")
    monkeypatch.setattr(engine, "ITEMS_PER_MESSAGE", 2)
    monkeypatch.setattr(engine, "MESSAGES_AT_LEAST", 1)
    sent = _sent_recorded(monkeypatch, send=True)

    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert job_dispatch(Job.objects.get(pk=job.pk)) == 5
    finally:
        celery_app.conf.task_always_eager = eager
    # Five items, two to a message: three messages to the job's queue, the real task run where it is sent (Celery's
    # eager mode): two, two and one. Run so, a message that claimed its whole count sends no other (which would run
    # inside it): the dispatch's own claim every item between them. Of the three, the last goes on (one at least).
    stays = {"goes_on": False}
    assert [message for message in sent if message[0] == ITEMS_TASK] == [
        (ITEMS_TASK, [job.pk, 2], stays, "assessing"),
        (ITEMS_TASK, [job.pk, 2], stays, "assessing"),
        (ITEMS_TASK, [job.pk, 2], None, "assessing"),
    ]
    job.refresh_from_db()
    assert (job.status, job.done_items, llm_server.count) == ("done", 5, 5)


@pytest.mark.parametrize(
    ("items", "messages"),
    [
        (0, 0),
        (1, 1),
        (20, 20),  # one an item at most
        (40, 32),  # 5, but 32 at least
        (200, 32),  # 25, but 32 at least
        (512, 64),
        (4001, 501),
    ],
)
def test_a_job_is_sent_its_share_of_messages_at_least_32_never_more_than_one_an_item(items, messages, monkeypatch):
    monkeypatch.setattr(engine, "ITEMS_PER_MESSAGE", 8)
    monkeypatch.setattr(engine, "MESSAGES_AT_LEAST", 32)
    assert engine.messages_for(items) == messages


def test_a_message_that_claimed_its_whole_count_sends_one_more_and_one_that_claimed_fewer_none(
    llm_server, answers, monkeypatch
):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", queue="assessing")
    sent = _sent_recorded(monkeypatch, send=False)
    # Two of the five claimed: three are left for the message it sends, to the job's queue.
    counts = job_items_process(job.pk, 2)
    assert job_items_continue(job.pk, 2, counts)
    assert sent == [(ITEMS_TASK, [job.pk, 2], None, "assessing")]
    # The three left, a message of three: its whole count again, so one more (which finds none: see below).
    counts = job_items_process(job.pk, 3)
    assert counts["done"] == 3 and job_items_continue(job.pk, 3, counts)
    # Nothing pending: a message of the chain finds no item, and it ends there.
    counts = job_items_process(job.pk, 2)
    assert counts == {"done": 0, "failed": 0, "skipped": 0} and not job_items_continue(job.pk, 2, counts)
    assert len(sent) == 2
    # A cancelled job's message claims nothing, and sends nothing.
    other = auto_assign_job_create(nuggets="manual", name="auto-other")
    job_cancel(other.pk)
    assert not job_items_continue(other.pk, 2, job_items_process(other.pk, 2))
    assert len(sent) == 2


def test_a_message_holds_several_items_but_not_so_many_that_a_stopping_worker_waits_long():
    # A worker's warm shutdown finishes the message in hand: at two calls an item and a few seconds a call, a
    # message of more than about ten items would hold it for a minute.
    assert 2 <= ITEMS_PER_MESSAGE <= 10


def test_the_items_task_sends_one_more_message_when_it_claimed_its_whole_count(llm_server, answers, monkeypatch):
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", queue="assessing")
    sent = _sent_recorded(monkeypatch, send=False)
    # As a worker runs it (not eagerly): two of five claimed, one more message for the three left.
    assert job_items_run(job.pk, 2) == {"done": 2, "failed": 0, "skipped": 0}
    assert sent == [(ITEMS_TASK, [job.pk, 2], None, "assessing")]
    assert job_items_run(job.pk, 10) == {"done": 3, "failed": 0, "skipped": 0}
    assert len(sent) == 1


def test_only_a_jobs_last_messages_send_one_more(llm_server, answers, monkeypatch, django_capture_on_commit_callbacks):
    # Five items, two to a message (three messages), one at least going on: the first two have a later one queued
    # behind them, and are sent not to go on; the last is sent as any message is, and goes on.
    monkeypatch.setattr(engine, "ITEMS_PER_MESSAGE", 2)
    monkeypatch.setattr(engine, "MESSAGES_AT_LEAST", 1)
    job = auto_assign_job_create(nuggets="manual", name="auto-gpt", queue="assessing")
    sent = _sent_recorded(monkeypatch, send=False)
    with django_capture_on_commit_callbacks(execute=True):
        assert job_dispatch(Job.objects.get(pk=job.pk)) == 5
    stays = {"goes_on": False}
    assert sent == [
        (ITEMS_TASK, [job.pk, 2], stays, "assessing"),
        (ITEMS_TASK, [job.pk, 2], stays, "assessing"),
        (ITEMS_TASK, [job.pk, 2], None, "assessing"),
    ]

    # A message sent not to go on claims its whole count and sends none; one that goes on sends one more, as it is.
    sent.clear()
    assert job_items_run(job.pk, 2, goes_on=False) == {"done": 2, "failed": 0, "skipped": 0}
    assert sent == []
    assert job_items_run(job.pk, 2) == {"done": 2, "failed": 0, "skipped": 0}
    assert sent == [(ITEMS_TASK, [job.pk, 2], None, "assessing")]


@pytest.mark.parametrize(("messages", "going_on"), [(0, 0), (1, 1), (32, 32), (33, 32), (250, 32)])
def test_of_a_jobs_messages_the_last_32_at_most_go_on(messages, going_on, monkeypatch):
    monkeypatch.setattr(engine, "MESSAGES_AT_LEAST", 32)
    assert engine.messages_going_on(messages) == going_on
