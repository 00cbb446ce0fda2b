"""The real services the worker tests share: the broker at REDIS_URL and answers to label (the test database's URL
for another process is bench.serving.database_url)."""

import os

import pytest

from tests.builders import make_answer, make_nugget_set, make_run, make_topic

REDIS_URL = os.environ.get("REDIS_URL", "")


def redis_or_skip() -> str:
    if not REDIS_URL:
        pytest.skip("set REDIS_URL (e.g. redis://127.0.0.1:6379/0) to run the real-worker tests")
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis at REDIS_URL={REDIS_URL} is down: {exc}")
    return REDIS_URL


def redis_slots(settings) -> str:
    """The tests' Redis as the broker, so that the LLM concurrency limit's slots are kept there
    (assessor.jobs.llm.concurrency); the test is skipped without one."""
    settings.CELERY_BROKER_URL = redis_or_skip()
    return settings.CELERY_BROKER_URL


def make_answers(count: int, nuggets: int = 12) -> None:
    """One topic with a manual nugget set "manual" of `nuggets` nuggets and `count` runs' answers to label."""
    topic = make_topic("w1", query="zebra stripes")
    make_nugget_set(topic, texts=[f"zebra fact {i}" for i in range(nuggets)], kind="manual", name="manual")
    for i in range(count):
        make_answer(make_run(f"run{i:02d}"), topic, [(f"Zebra fact {i} is known.", [])])
