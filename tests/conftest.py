"""Fixtures shared by the whole suite; each app's folder has its own conftest.py beside its tests.

The hooks of tests/processes.py mark every process the tests start, and fail the run if any is left running; a
transactional test's flush deletes rows on PostgreSQL instead of truncating tables (tests/flush.py).
"""

from pathlib import Path

import pytest

from assessor.collection.uploads import upload_run
from assessor.models import Run, Segment, Topic
from assessor.project.llm_endpoints import endpoints_file_read
from assessor.work.roles import Role
from tests.builders import REPO, make_run, make_topic, make_user
from tests.flush import flush_by_delete
from tests.llm_server import FakeLLMServer, endpoints_toml, llm_settings
from tests.processes import pytest_sessionfinish, pytest_sessionstart, pytest_terminal_summary  # noqa: F401
from tests.scenarios import Scenario, make_relevant_segments, make_scenario

SHARED_DATA = REPO.parent / "shared" / "data" / "trec-rag-2024"

flush_by_delete()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A suite on another database than SQLite skips the tests marked `database_independent`: they would run there
    exactly as they run in the suite on SQLite (CI runs both at once, on two CPUs, and they cost it minutes)."""
    from django.db import connection

    if connection.vendor == "sqlite":
        return
    skip = pytest.mark.skip(
        reason=f"the same on any database: run in the suite on SQLite, not again on {connection.vendor}"
    )
    for item in items:
        if item.get_closest_marker("database_independent"):
            item.add_marker(skip)


@pytest.fixture
def shared_data() -> Path:
    """The full TREC 2024 RAG data beside the checkout; tests using it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the full TREC data is not at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture
def write_file(tmp_path: Path):
    """Write text (or bytes) to a file in a temporary folder and return its path."""

    def write(name: str, content: str | bytes) -> Path:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return write


@pytest.fixture
def organizer(client):
    """The test client, logged in as an organizer."""
    client.force_login(make_user(Role.ORGANIZER))
    return client


@pytest.fixture
def scenario(db) -> Scenario:
    """A topic to judge, three runs' answers, the assessor's nuggets and LLM output planted beside them."""
    return make_scenario()


@pytest.fixture
def topic(db) -> Topic:
    return make_topic()


@pytest.fixture
def judged_topic(db) -> tuple[Topic, list[Segment]]:
    """A topic with four segments NIST judged, graded 2, 1, 0 and 3."""
    topic = make_topic()
    return topic, make_relevant_segments(topic, [2, 1, 0, 3])


@pytest.fixture
def run(db) -> Run:
    return make_run()


@pytest.fixture
def llm_server(settings):
    """The local OpenAI-compatible server, with the LLM settings pointing at it."""
    server = FakeLLMServer().start()
    llm_settings(settings, server)
    yield server
    server.stop()


@pytest.fixture
def worker_inline(monkeypatch) -> list[int]:
    """Jobs launched from the pages are worked at once, in the test, by the engine's own item processing
    (instead of going to a broker); returns the ids of the jobs queued."""
    from assessor.jobs.engine import job_run_sync

    dispatched: list[int] = []

    def queue(job) -> None:
        dispatched.append(job.pk)
        job_run_sync(job.pk)

    monkeypatch.setattr("assessor.jobs.views.job_queue", queue)
    return dispatched


@pytest.fixture
def two_llm_endpoints(settings, monkeypatch, write_file) -> dict[str, FakeLLMServer]:
    """Two named endpoints of an LLM_ENDPOINTS file, each with its own local server, model, key, limit and prices.

    "alpha" answers by the server's rules; "beta" is the flipped model that turns
    every label round. The LLM_* variables ("default") point at alpha's server.
    """
    alpha, beta = FakeLLMServer().start(), FakeLLMServer(flip=True).start()
    llm_settings(settings, alpha)
    monkeypatch.setenv("ALPHA_KEY", "key-of-alpha")
    monkeypatch.setenv("BETA_KEY", "key-of-beta")
    endpoints = {
        "alpha": {"base_url": alpha.url, "api_key_env": "ALPHA_KEY", "model": "model-alpha", "concurrency": 1,
                  "price_input": 1.0, "price_output": 2.0, "timeout": 5.0},
        "beta": {"base_url": beta.url, "api_key_env": "BETA_KEY", "model": "model-beta", "concurrency": 3,
                 "price_input": 3.0, "price_output": 5.0, "timeout": 5.0},
    }  # fmt: skip
    settings.LLM_ENDPOINTS = endpoints_file_read(write_file("endpoints.toml", endpoints_toml(endpoints)))
    yield {"alpha": alpha, "beta": beta}
    alpha.stop()
    beta.stop()


@pytest.fixture
def upload_dir(settings, tmp_path) -> Path:
    """Where uploads are kept (and streamed to, past the in-memory size) during the test."""
    settings.UPLOAD_DIR = tmp_path / "uploads"
    settings.FILE_UPLOAD_TEMP_DIR = str(settings.UPLOAD_DIR / "incoming")
    Path(settings.FILE_UPLOAD_TEMP_DIR).mkdir(parents=True)
    return settings.UPLOAD_DIR


@pytest.fixture
def upload_worker(upload_dir, monkeypatch) -> list[str]:
    """Uploads imported as soon as they are queued, by the worker's own function run in the test
    (a Celery worker runs the same `upload_run`); returns each import's outcome."""
    outcomes: list[str] = []
    monkeypatch.setattr(
        "assessor.collection.uploads.upload_queue", lambda upload: outcomes.append(upload_run(upload.pk))
    )
    return outcomes


@pytest.fixture
def upload_queued(upload_dir, monkeypatch) -> list[int]:
    """Uploads queued but left for the test to import (`upload_run`); returns the ids queued, in order."""
    queued: list[int] = []
    monkeypatch.setattr("assessor.collection.uploads.upload_queue", lambda upload: queued.append(upload.pk))
    return queued
