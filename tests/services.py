"""The real services the worker tests share: the broker at REDIS_URL, the test database's URL, answers to label."""

import os

import pytest
from django.db import connection

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


def database_url(*, host: str | None = None, port: int | None = None) -> str:
    """The test database as a DATABASE_URL for another process, optionally reached at another address."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or ""
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = host or db.get("HOST") or "127.0.0.1"
    port = port or db.get("PORT") or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


def make_answers(count: int, nuggets: int = 12) -> None:
    """One topic with a manual nugget set "manual" of `nuggets` nuggets and `count` runs' answers to label."""
    topic = make_topic("w1", query="zebra stripes")
    make_nugget_set(topic, texts=[f"zebra fact {i}" for i in range(nuggets)], kind="manual", name="manual")
    for i in range(count):
        make_answer(make_run(f"run{i:02d}"), topic, [(f"Zebra fact {i} is known.", [])])
