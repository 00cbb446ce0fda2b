"""The processes the LLM benchmarks start and measure: the fake LLM server and real Celery workers."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.request import urlopen

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.db import connection

from assessor.project.celery import app as celery_app
from bench.serving import database_url

REPO = Path(settings.BASE_DIR)


def worker_arguments(parser: CommandParser) -> None:
    """The options of a benchmark that runs an LLM job through real workers against the fake server."""
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the server takes per answer")
    parser.add_argument("--concurrency", type=int, default=16, help="the LLM concurrency limit")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--threads", type=int, default=0, help="threads per worker (default: 2 x concurrency)")
    parser.add_argument(
        "--redis", default="", help="the Redis broker (default: $REDIS_URL, or CELERY_BROKER_URL when it is Redis)"
    )


def workers_broker(command: str, redis: str) -> str:
    """The Redis URL the workers of `command` share (`--redis`, $REDIS_URL as for bench_llm and the tests, or the
    settings' broker when it is Redis), set as this process's broker; refused without one, or on a database the
    workers cannot share."""
    broker = settings.CELERY_BROKER_URL
    redis_url = redis or os.environ.get("REDIS_URL", "") or (broker if broker.startswith("redis") else "")
    if not redis_url:
        raise CommandError(f"{command} runs real workers on Redis: set REDIS_URL or pass --redis URL")
    if connection.vendor == "sqlite" and ":memory:" in str(connection.settings_dict["NAME"]):
        raise CommandError(f"{command} needs a database the workers can share (a file or PostgreSQL)")
    celery_app.conf.broker_url = redis_url
    return redis_url


def fake_server_start(latency: float) -> tuple[subprocess.Popen, str]:
    """bench.fake_llm in a process of its own, answering after `latency` seconds; its URL."""
    server = subprocess.Popen(
        [sys.executable, "-m", "bench.fake_llm", "--latency", str(latency)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    if not url.startswith("http"):
        raise CommandError("the test server did not start")
    return server, url


def fake_server_stop(server: subprocess.Popen) -> str:
    """Stop the server; what it printed of its requests."""
    server.terminate()
    assert server.stdout is not None
    stats = server.stdout.read().strip()
    server.wait(timeout=10)
    return stats


def server_stats(url: str) -> dict:
    with urlopen(url.removesuffix("/v1") + "/stats", timeout=10) as response:
        return json.load(response)


Workers = list[tuple[subprocess.Popen, Path]]


def worker_env(*, url: str, redis_url: str, concurrency: int) -> dict[str, str]:
    """A benchmark worker's environment: this database, the broker, and an endpoint at the fake server (a job keeps
    its own model and server; a worker needs one configured to run LLM jobs at all)."""
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": redis_url,
        "LLM_BASE_URL": url,
        "LLM_MODEL": "bench",
        "LLM_API_KEY": "",
        "LLM_API_VERSION": "",
        "LLM_CONCURRENCY": str(concurrency),
        "PYTHONPATH": str(REPO),
    }


def workers_start(
    count: int, queue: str, env: dict, concurrency: int, *, app: str = "assessor", ready_seconds: float = 120.0
) -> Workers:
    """`count` Celery worker processes (threads pool of `concurrency`) on `queue`, once each says it is ready. `app`:
    the module of their Celery app (bench.client_timed times the LLM client's requests in them).

    When one has not said so within `ready_seconds`, all of them are stopped before the error: left running, they
    would hold their database connections and take their CPU from every benchmark after."""
    workers: Workers = []
    for index in range(count):
        log = Path(tempfile.gettempdir()) / f"{queue}-{index}.log"
        command = [
            str(Path(sys.executable).with_name("celery")), "-A", app, "worker", "-P", "threads",
            "-c", str(concurrency), "-Q", queue, "-n", f"{queue}-{index}@%h", "--without-gossip",
            "--without-mingle", "--without-heartbeat", "-l", "INFO", "--logfile", str(log),
        ]  # fmt: skip
        process = subprocess.Popen(
            command, cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        workers.append((process, log))
    deadline = time.monotonic() + ready_seconds
    for _worker, log in workers:
        while not (log.exists() and " ready." in log.read_text(errors="replace")):
            if time.monotonic() > deadline:
                said = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
                workers_stop(workers)
                raise CommandError(f"a worker did not start within {ready_seconds:g} s; its log ended:\n{said}")
            time.sleep(0.2)
    return workers


def workers_stop(workers: Workers) -> None:
    for worker, _log in workers:
        with contextlib.suppress(ProcessLookupError):  # one that has ended by itself
            os.killpg(worker.pid, signal.SIGTERM)
    for worker, log in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)
        log.unlink(missing_ok=True)


def process_cpu_seconds(pid: int) -> float:
    """User and system CPU of a process and its finished children, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the command's closing parenthesis: utime, stime, cutime, cstime are fields 12-15 (from 1).
    ticks = sum(int(value) for value in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())
