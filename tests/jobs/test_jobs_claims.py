"""Claims under real concurrency: many workers race for the same items; each item goes to exactly one."""

import threading
from collections.abc import Callable, Iterator

import pytest
from django.db import connection, connections

from assessor.jobs.engine import PENDING_COUNTED, _next_item_claimed, item_claim
from assessor.models import Job, JobItem


def race(items: int, claims: Callable[[Job, list[JobItem], str], Iterator[int]]) -> None:
    """Six workers start at once, each claiming by `claims` (the ids it won); every item must go to exactly one,
    and be recorded as that worker's."""
    if connection.vendor == "sqlite" and connection.is_in_memory_db():
        pytest.skip("threads need a shared database file or PostgreSQL (set TEST_DATABASE_NAME)")
    job = Job.objects.create(kind="auto_assign", output_name="race", model="m")
    rows = JobItem.objects.bulk_create(JobItem(job=job, key=f"k{i}") for i in range(items))
    wins: dict[int, list[str]] = {item.pk: [] for item in rows}
    lock = threading.Lock()
    start = threading.Barrier(6)

    def worker(name: str) -> None:
        try:
            start.wait()
            for item_id in claims(job, rows, name):
                with lock:
                    wins[item_id].append(name)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(f"w{n}",)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(len(names) == 1 for names in wins.values()), wins
    claimed = dict(JobItem.objects.filter(job=job).values_list("pk", "claimed_by"))
    assert claimed == {pk: names[0] for pk, names in wins.items()}


def test_racing_workers_claim_each_item_once(transactional_db):
    def by_id(job: Job, items: list[JobItem], name: str) -> Iterator[int]:
        return (item.pk for item in items if item_claim(item.pk, worker=name))

    race(20, by_id)


def test_racing_workers_claiming_a_jobs_next_item_each_get_their_own(transactional_db):
    def next_ones(job: Job, items: list[JobItem], name: str) -> Iterator[int]:
        while (claimed := _next_item_claimed(job.pk, worker=name)) is not None:
            yield claimed[0].pk

    race(40, next_ones)


def test_a_claim_counts_the_items_of_its_job_still_pending_after_it_up_to_a_bound(db):
    """70 items claimed one after the other: 69 pending after the first, counted up to 64; none after the last."""
    job = Job.objects.create(kind="auto_assign", output_name="counted", model="m")
    JobItem.objects.bulk_create(JobItem(job=job, key=f"k{i}") for i in range(70))
    after = []
    while (claimed := _next_item_claimed(job.pk, worker="w")) is not None:
        after.append(claimed.pending_after)
    assert PENDING_COUNTED == 64
    assert after == [64] * 6 + list(range(63, -1, -1))
