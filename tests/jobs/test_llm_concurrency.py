"""The concurrency limit: database-row slots (any broker) and the Redis semaphore (Redis broker)."""

import os
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from assessor.jobs.llm import concurrency
from assessor.jobs.llm.concurrency import _database_slot_take, llm_slot, shared_backend
from assessor.models.jobs import LLMSlot


@pytest.mark.django_db
def test_database_slots_are_taken_once_and_expire():
    LLMSlot.objects.bulk_create(LLMSlot(pool="p", number=n) for n in range(2))
    first = _database_slot_take("p", 2, 60, "a")
    second = _database_slot_take("p", 2, 60, "b")
    assert {first, second} == {0, 1}
    assert _database_slot_take("p", 2, 60, "c") is None
    # A holder that died: its lease runs out and the slot is free again.
    LLMSlot.objects.filter(number=first).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert _database_slot_take("p", 2, 60, "c") == first


@pytest.mark.django_db
def test_a_database_slot_is_released_after_the_block(settings):
    settings.CELERY_BROKER_URL = "filesystem://"
    assert shared_backend() == "database"
    with llm_slot(endpoint="e", limit=1, timeout=5):
        assert LLMSlot.objects.exclude(holder="").count() == 1
    assert LLMSlot.objects.exclude(holder="").count() == 0


def test_the_redis_semaphore_holds_the_limit_across_holders(settings):
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        pytest.skip("set REDIS_URL to test the Redis semaphore")
    settings.CELERY_BROKER_URL = redis_url
    assert shared_backend() == "redis"
    endpoint = f"test-{time.time()}"
    inside = 0
    most = 0
    lock = threading.Lock()

    def hold() -> None:
        nonlocal inside, most
        with llm_slot(endpoint=endpoint, limit=3, timeout=5):
            with lock:
                inside += 1
                most = max(most, inside)
            time.sleep(0.05)
            with lock:
                inside -= 1

    # Two "processes": separate local semaphores, so only Redis keeps the limit between them.
    concurrency._local_semaphores.clear()
    threads = [threading.Thread(target=hold) for _ in range(6)]
    for thread in threads[:3]:
        thread.start()
    concurrency._local_semaphores.clear()
    for thread in threads[3:]:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == 3


def test_a_waiter_on_redis_is_woken_by_the_release_instead_of_asking_again(settings, monkeypatch):
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        pytest.skip("set REDIS_URL to test the Redis semaphore")
    settings.CELERY_BROKER_URL = redis_url
    client = concurrency._redis_client()
    asks: list[str] = []
    register = client.register_script

    def counted(script: str):
        registered = register(script)
        if script != concurrency.ACQUIRE_SCRIPT:
            return registered

        def ask(**kwargs):
            asks.append(threading.current_thread().name)
            return registered(**kwargs)

        return ask

    monkeypatch.setattr(client, "register_script", counted)
    key = f"assessor:llm-slots:test-{time.time()}"
    events: list[str] = []
    inside = threading.Event()

    def hold() -> None:
        # Two processes' holders: each calls the Redis layer itself, past any semaphore of this process.
        with concurrency._redis_slot(key, 1, 10):
            events.append("holder in")
            inside.set()
            time.sleep(0.5)
            events.append("holder out")

    def wait() -> None:
        inside.wait()
        with concurrency._redis_slot(key, 1, 10):
            events.append("waiter in")

    threads = [threading.Thread(target=hold, name="holder"), threading.Thread(target=wait, name="waiter")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert events == ["holder in", "holder out", "waiter in"]
    # Asked once, refused, woken by the release, asked again: polling every few milliseconds asked dozens of times.
    assert asks.count("waiter") == 2 and asks.count("holder") == 1


def test_a_worker_starting_prepares_the_client_the_scripts_and_the_connections(settings, monkeypatch):
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        pytest.skip("set REDIS_URL to test the Redis semaphore")
    import redis

    from assessor.jobs import tasks
    from assessor.jobs.llm import client as llm_client

    settings.CELERY_BROKER_URL = redis_url
    settings.LLM_MODEL, settings.LLM_BASE_URL, settings.LLM_API_KEY = "m", f"http://127.0.0.1:9/{time.time()}", ""
    settings.LLM_CONCURRENCY = 5
    monkeypatch.setattr(concurrency, "_redis_clients", {})
    monkeypatch.setattr(llm_client, "_clients", {})
    redis.Redis.from_url(redis_url).script_flush()
    interval = sys.getswitchinterval()
    try:
        tasks.worker_prepared()
        assert sys.getswitchinterval() == pytest.approx(0.001)
    finally:
        sys.setswitchinterval(interval)
    # The default endpoint's client is made, under the key a call looks it up by.
    assert [key[0] for key in llm_client._clients] == [settings.LLM_BASE_URL]
    # Both scripts are in Redis, so no first call loads them, and the pool holds a connection per slot.
    shared = concurrency._redis_client()
    assert shared.script_exists(shared.register_script(concurrency.ACQUIRE_SCRIPT).sha)[0]
    assert shared.script_exists(shared.register_script(concurrency.RELEASE_SCRIPT).sha)[0]
    assert len(shared.connection_pool._available_connections) >= 5


def test_a_worker_without_a_default_endpoint_or_redis_starts_all_the_same(settings, monkeypatch):
    from assessor.jobs import tasks
    from assessor.jobs.llm import client as llm_client

    settings.CELERY_BROKER_URL = "filesystem://"
    settings.LLM_MODEL = ""
    monkeypatch.setattr(llm_client, "_clients", {})
    interval = sys.getswitchinterval()
    try:
        tasks.worker_prepared()
    finally:
        sys.setswitchinterval(interval)
    assert llm_client._clients == {}
