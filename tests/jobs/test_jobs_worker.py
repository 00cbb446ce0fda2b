"""A real Celery worker on Redis (and on RabbitMQ) runs a job end to end; a worker killed mid-job is followed by a resume.

The worker and the commands run as subprocesses sharing the test database:
on PostgreSQL naturally, on SQLite through a file (the in-memory default is
switched to a file when this module is collected). Each test uses its own
queue, so workers of other test runs on the same Redis never take its tasks.
"""

import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from assessor.models import Job, JobItem
from assignment.models import AssignmentLabel
from bench.serving import database_url
from tests import processes
from tests.llm_server import FakeLLMServer, llm_settings
from tests.services import make_answers, redis_or_skip

REPO = Path(__file__).resolve().parents[2]
AMQP_URL = os.environ.get("AMQP_URL", "")

_test_db = django_settings.DATABASES["default"]
if _test_db["ENGINE"].endswith("sqlite3") and not _test_db.get("TEST", {}).get("NAME"):
    # The worker subprocess must see the test database: make it a file.
    _test_db.setdefault("TEST", {})["NAME"] = str(Path(tempfile.gettempdir()) / f"assessor-test-{os.getpid()}.sqlite3")

pytestmark = [pytest.mark.services, pytest.mark.slow]


def rabbitmq_or_skip() -> str:
    if not AMQP_URL:
        pytest.skip("set AMQP_URL (e.g. amqp://guest:guest@127.0.0.1:5672//) to run the RabbitMQ worker test")
    from kombu import Connection

    try:
        with Connection(AMQP_URL, connect_timeout=2) as amqp:
            amqp.ensure_connection(max_retries=1)
    except Exception as exc:  # kombu raises the transport's own errors
        pytest.skip(f"RabbitMQ at AMQP_URL={AMQP_URL} is down: {exc}")
    return AMQP_URL


class Services:
    def __init__(self, server: FakeLLMServer, redis_url: str):
        self.queue = f"test-{uuid.uuid4().hex[:10]}"
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": redis_url,
            "LLM_BASE_URL": server.url,
            "LLM_MODEL": "fake-model",
            "LLM_API_KEY": "",
            "LLM_CONCURRENCY": "4",
            "LLM_MAX_RETRIES": "2",
            "LLM_TIMEOUT": "10",
            "PYTHONPATH": str(REPO),
        }
        self.workers: list[subprocess.Popen] = []

    def start_worker(self, *, threads: int = 4, env: dict[str, str] | None = None) -> subprocess.Popen:
        """A worker on the test's queue; `env`: its environment, if not the services' own."""
        command = [
            str(REPO / ".venv" / "bin" / "celery"), "-A", "assessor", "worker", "-P", "threads", "-c", str(threads),
            "-Q", self.queue, "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING",
            # A node name of its own: RabbitMQ gives a node's control queue to one connection at a time, so two
            # suites running at once on this machine would refuse each other's worker under one name.
            "-n", f"{self.queue}-{len(self.workers)}@%h",
        ]  # fmt: skip
        worker = processes.start(command, cwd=REPO, env=env or self.env, stop_seconds=10)
        self.workers.append(worker)
        return worker

    def manage(self, *args: str, timeout: float = 120) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=REPO, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def kill(self, worker: subprocess.Popen) -> None:
        processes.kill(worker)

    def stop_all(self) -> None:
        for worker in self.workers:
            processes.stop(worker)


@pytest.fixture
def services(request, transactional_db, settings):
    broker = getattr(request, "param", "redis")
    broker_url = rabbitmq_or_skip() if broker == "rabbitmq" else redis_or_skip()
    server = FakeLLMServer().start()
    llm_settings(settings, server)
    running = Services(server, broker_url)
    yield server, running
    running.stop_all()
    server.stop()


@pytest.mark.parametrize("services", ["redis", "rabbitmq"], indirect=True)
def test_a_worker_runs_a_job_end_to_end(services):
    server, running = services
    make_answers(4)
    running.start_worker()
    out = running.manage("run_auto_assign", "--nuggets", "manual", "--name", "auto-w", "--queue", running.queue, "--wait")
    job = Job.objects.get(output_name="auto-w")
    assert f"job {job.pk} done: 4/4 items (0 failed), 8 calls" in out
    assert AssignmentLabel.objects.filter(assigner="auto-w", job=job).count() == 48
    assert server.count == 8


def test_a_killed_worker_is_followed_by_a_resume_without_duplicates(services):
    # Enough slow answers (30 x 0.4 s over 2 threads) that a busy machine still
    # kills the worker mid-job.
    ANSWERS = 30
    server, running = services
    server.latency = 0.4
    make_answers(ANSWERS)
    worker = running.start_worker(threads=2)
    running.manage("run_auto_assign", "--nuggets", "manual", "--name", "auto-k", "--queue", running.queue)
    job = Job.objects.get(output_name="auto-k")
    deadline = time.monotonic() + 60
    while Job.objects.get(pk=job.pk).done_items < 2:
        assert time.monotonic() < deadline, "the worker did not start working"
        time.sleep(0.05)
    running.kill(worker)
    job.refresh_from_db()
    assert job.done_items < ANSWERS, "the job finished before the worker was killed"
    stranded = JobItem.objects.filter(job=job, status="claimed").count()

    running.start_worker(threads=4)
    out = running.manage("run_auto_assign", "--resume", str(job.pk), "--wait")
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items) == ("done", ANSWERS, 0), out
    assert not JobItem.objects.filter(job=job).exclude(status="done").exists()
    labels = AssignmentLabel.objects.filter(assigner="auto-k")
    # Each (answer, nugget) labelled exactly once.
    assert labels.count() == ANSWERS * 12
    assert labels.values("answer", "nugget").distinct().count() == ANSWERS * 12
    # The items the dead worker held were done again by the resume.
    assert stranded == 0 or JobItem.objects.filter(job=job, attempts__gte=2).count() >= stranded


def worker_backends(name: str) -> list[tuple[int, float]]:
    """The server processes of the connections named `name` (their application_name): (pid, start as epoch)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, extract(epoch FROM backend_start) FROM pg_stat_activity WHERE application_name = %s",
            [name],
        )
        return sorted((pid, float(started)) for pid, started in cursor.fetchall())


def worker_backends_last_statements(name: str) -> list[str]:
    """The last statement each connection named `name` sent (pg_stat_activity's `query`)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT query FROM pg_stat_activity WHERE application_name = %s", [name])
        return [query for (query,) in cursor.fetchall()]


def test_on_postgresql_a_workers_threads_open_their_connections_as_it_starts_and_keep_them(services):
    """Each thread opens its connection before the worker takes a message, prepares its session there (the claim
    rehearsed last), and works its items on it: the job's first items, all at once, open none
    (assessor.jobs.tasks.worker_connections_opened)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("on SQLite a worker's connections are closed after every task: there is nothing to keep")
    server, running = services
    make_answers(6)
    name = running.queue
    worker_env = {**running.env, "DATABASE_URL": f"{running.env['DATABASE_URL']}?application_name={name}"}
    running.start_worker(threads=3, env=worker_env)
    deadline = time.monotonic() + 60
    while len(worker_backends(name)) < 3:
        assert time.monotonic() < deadline, f"the worker's threads opened {worker_backends(name)}"
        time.sleep(0.1)
    time.sleep(0.5)  # any connection opened late would show by now
    opened = worker_backends(name)
    rehearsed = worker_backends_last_statements(name)
    job_started = time.time()

    running.manage("run_auto_assign", "--nuggets", "manual", "--name", "auto-c", "--queue", running.queue, "--wait")

    job = Job.objects.get(output_name="auto-c")
    assert (job.status, job.done_items, job.calls) == ("done", 6, 12)
    # One connection a thread, opened before the job, and the same ones after it: every item was worked on a
    # connection opened before the job was sent.
    assert len(opened) == 3
    assert all(started < job_started for _pid, started in opened)
    assert worker_backends(name) == opened
    # Each session ran the claim before any job, on no job: the job's six items were all claimed by its own run.
    assert len(rehearsed) == 3
    assert all(query.startswith('UPDATE "assessor_jobitem" SET status') for query in rehearsed), rehearsed
    assert sorted(JobItem.objects.filter(job=job).values_list("attempts", flat=True)) == [1] * 6
