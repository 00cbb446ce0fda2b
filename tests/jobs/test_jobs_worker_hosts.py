"""Workers on two other machines share one job through one PostgreSQL and one Redis; one is killed mid-job.

The machines are network namespaces this test makes (tests/hosts.py), each with
its own address and host name and nothing of this machine in reach but the
bridge's address, where forwarders lead to PostgreSQL, Redis and the fake LLM
server. Each runs a real `celery worker` with only the environment a worker
machine is given (docs/deployment.md). The job is launched and resumed from
this machine, as an organizer would.

Needs root, `ip`, `unshare`, PostgreSQL as the test database and REDIS_URL;
skips, saying which is missing, otherwise.
"""

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

import pytest
import redis
from django.db import connection
from django.db.models import Count
from kombu.transport.redis import PRIORITY_STEPS as REDIS_PRIORITY_STEPS
from kombu.transport.redis import Channel as RedisChannel

from assessor.models import Job, JobItem, LLMCall
from assignment.models import AssignmentLabel
from bench.serving import database_url
from tests import processes
from tests.hosts import (
    NAME_PREFIX,
    Host,
    HostNetwork,
    TcpForwarder,
    host_network,
    host_network_or_skip,
    leftovers_remove,
)
from tests.llm_server import FakeLLMServer
from tests.services import make_answers, redis_or_skip

REPO = Path(__file__).resolve().parents[2]
NUGGETS = 12
CALLS_PER_ANSWER = 2  # 12 nuggets, listwise 10 per call: 10 + 2
THREADS_PER_WORKER = 2
# Below the two workers' 4 threads: the cap on calls in flight is one for every machine (held in Redis).
LLM_CONCURRENCY = 3
SECRET_KEY = "worker-hosts-test-" + "k" * 40
REDIS_PRIORITY_SEP = RedisChannel.sep
REDIS_UNACKED_INDEX = RedisChannel.unacked_index_key
REDIS_UNACKED_KEY = RedisChannel.unacked_key

pytestmark = [pytest.mark.services, pytest.mark.slow]


def postgresql_or_skip() -> None:
    if connection.vendor != "postgresql":
        pytest.skip(
            "the worker hosts share one PostgreSQL database: run with DATABASE_URL=postgres://... "
            "(SQLite is a file on one machine)"
        )


def wait_for(condition: Callable[[], bool], *, timeout: float, failure: Callable[[], str]) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, failure()
        time.sleep(0.05)


class Campaign:
    """This machine's services, forwarded to the hosts' network, and the workers running on the hosts."""

    def __init__(self, network: HostNetwork, server: FakeLLMServer, redis_url: str, var_dir: Path):
        self.network = network
        self.server = server
        self.queue = f"test-{uuid.uuid4().hex[:10]}"
        self.redis_url = redis_url
        self.var_dir = var_dir
        db = connection.settings_dict
        broker = urlsplit(redis_url)
        llm = urlsplit(server.url)
        gateway = network.gateway
        self.forwarders = {
            "postgresql": TcpForwarder(gateway, (db.get("HOST") or "127.0.0.1", int(db.get("PORT") or 5432))).start(),
            "redis": TcpForwarder(gateway, (broker.hostname or "127.0.0.1", broker.port or 6379)).start(),
            "llm": TcpForwarder(gateway, (llm.hostname or "127.0.0.1", llm.port or 80)).start(),
        }
        ports = {name: forwarder.port for name, forwarder in self.forwarders.items()}
        self.llm_url = f"http://{gateway}:{ports['llm']}/v1"
        # What every worker machine is given: the same values on each.
        self.worker_env = {
            "DATABASE_URL": database_url(host=gateway, port=ports["postgresql"]),
            "CELERY_BROKER_URL": f"redis://{gateway}:{ports['redis']}{broker.path}",
            "LLM_BASE_URL": self.llm_url,
            "LLM_MODEL": "fake-model",
            "LLM_API_KEY": "",
            "LLM_CONCURRENCY": str(LLM_CONCURRENCY),
            "LLM_TIMEOUT": "10",
            "LLM_MAX_RETRIES": "2",
            "SECRET_KEY": SECRET_KEY,
            "ASSESSOR_REQUIRE_SECRET_KEY": "1",
        }
        # This machine reaches its services directly; it names the LLM endpoint as the workers do.
        self.organizer_env = {
            **os.environ,
            **self.worker_env,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": redis_url,
            "PYTHONPATH": str(REPO),
        }
        self.workers: dict[str, subprocess.Popen] = {}
        self._logs: list[IO[str]] = []

    def start_worker(self, host: Host) -> None:
        var_dir = self.var_dir / host.name  # a machine of its own: nothing shared on disk
        var_dir.mkdir()
        env = {
            "PATH": os.environ["PATH"],
            "PYTHONPATH": str(REPO),
            # A host's process writes nothing into the checkout (the demo test compares its listing meanwhile).
            "PYTHONDONTWRITEBYTECODE": "1",
            "ASSESSOR_VAR_DIR": str(var_dir),
            **self.worker_env,
        }
        command = [
            str(REPO / ".venv" / "bin" / "celery"), "-A", "assessor", "worker", "-P", "threads",
            "-c", str(THREADS_PER_WORKER), "-Q", self.queue, "--without-gossip", "--without-mingle",
            "--without-heartbeat", "-l", "WARNING",
        ]  # fmt: skip
        log = (var_dir / "worker.log").open("w")
        self._logs.append(log)
        self.workers[host.name] = processes.start(
            host.command(command), cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, stop_seconds=10
        )

    def queue_length(self) -> int:
        """The messages waiting in the test's queue: the broker's list of it, one per priority (kombu's Redis)."""
        broker = redis.Redis.from_url(self.redis_url)
        try:
            keys = [self.queue] + [f"{self.queue}{REDIS_PRIORITY_SEP}{step}" for step in REDIS_PRIORITY_STEPS[1:]]
            return sum(broker.llen(key) for key in keys)
        finally:
            broker.close()

    def taken_unacked(self, *, since: float) -> int:
        """The messages of the test's queue a worker took after `since` and has not acknowledged: kombu's Redis
        keeps each taken message in `unacked_index`, scored with the time it was taken, and in `unacked` as
        [message, exchange, routing key], until the worker acks it. Both are shared by every queue of the
        database: another test's worker on the same Redis (a suite run beside this one) is not counted."""
        broker = redis.Redis.from_url(self.redis_url)
        try:
            tags = broker.zrangebyscore(REDIS_UNACKED_INDEX, f"({since!r}", "+inf")
            held = broker.hmget(REDIS_UNACKED_KEY, tags) if tags else []
            return sum(1 for raw in held if raw is not None and json.loads(raw)[2] == self.queue)
        finally:
            broker.close()

    def worker_logs(self) -> str:
        return "\n".join(
            f"--- {name}:\n{(self.var_dir / name / 'worker.log').read_text()[-3000:]}" for name in self.workers
        )

    def manage(self, *args: str, timeout: float = 180) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env=self.organizer_env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, result.stderr + self.worker_logs()
        return result.stdout

    def kill(self, host: Host) -> None:
        processes.kill(self.workers[host.name])

    def stop(self) -> None:
        for worker in self.workers.values():
            processes.stop(worker)
        for forwarder in self.forwarders.values():
            forwarder.stop()
        for log in self._logs:
            log.close()


@pytest.fixture
def network():
    with host_network(["host-a", "host-b"]) as made:
        yield made


@pytest.fixture
def campaign(request, transactional_db, tmp_path):
    postgresql_or_skip()
    redis_url = redis_or_skip()
    network = request.getfixturevalue("network")  # made only once the services are known to be there
    server = FakeLLMServer().start()
    running = Campaign(network, server, redis_url, tmp_path)
    yield running
    running.stop()
    server.stop()


def run_on(host: Host, code: str) -> subprocess.CompletedProcess:
    return subprocess.run(host.command([sys.executable, "-c", code]), capture_output=True, text=True, timeout=30)


def test_a_host_has_its_own_name_and_reaches_this_machine_only_at_the_bridge(network):
    host = network.hosts[0]
    assert run_on(host, "import socket; print(socket.gethostname())").stdout.strip() == "host-a"
    # PostgreSQL listens on this machine's 127.0.0.1; a host's 127.0.0.1 is its own.
    refused = run_on(host, "import socket; socket.create_connection(('127.0.0.1', 5432), timeout=3)")
    assert refused.returncode != 0 and "ConnectionRefusedError" in refused.stderr
    forwarder = TcpForwarder(network.gateway, ("127.0.0.1", 5432)).start()
    try:
        reached = run_on(host, f"import socket; socket.create_connection(('{network.gateway}', {forwarder.port}))")
        assert reached.returncode == 0, reached.stderr
        # The forwarder counts a connection once its thread has accepted it and reached the target, which may be
        # after the host's connect returned: waited for, not read at once.
        wait_for(
            lambda: dict(forwarder.peers) == {host.address: 1},
            timeout=10,
            failure=lambda: f"the forwarder counted {dict(forwarder.peers)}, not one connection from {host.address}",
        )
    finally:
        forwarder.stop()


def test_what_a_test_process_killed_before_its_clean_up_left_is_removed():
    host_network_or_skip()
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process id that no longer runs
    netns, bridge = f"{NAME_PREFIX}-{gone.pid}-abcdef-host-a", f"asb{uuid.uuid4().hex[:6]}"
    subprocess.run(["ip", "netns", "add", netns], check=True)
    subprocess.run(["ip", "link", "add", bridge, "type", "bridge"], check=True)
    subprocess.run(["ip", "link", "set", "dev", bridge, "alias", f"{NAME_PREFIX} {gone.pid}"], check=True)
    left_running = processes.start(["ip", "netns", "exec", netns, "sleep", "600"])
    try:
        wait_for(
            lambda: subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout.strip() != "",
            timeout=10,
            failure=lambda: "the process did not start in the namespace",
        )
        leftovers_remove()
        assert left_running.wait(timeout=10) == -signal.SIGKILL
        assert netns not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert subprocess.run(["ip", "link", "show", bridge], capture_output=True).returncode != 0
    finally:
        processes.kill(left_running)
        subprocess.run(["ip", "netns", "delete", netns], capture_output=True)
        subprocess.run(["ip", "link", "delete", bridge], capture_output=True)


def test_two_worker_hosts_share_a_job_and_one_killed_loses_nothing(campaign):
    ANSWERS = 60
    host_a, host_b = campaign.network.hosts
    # Slow answers (2 calls of 0.5 s an answer, 3 at a time) so the kill lands mid-job on a busy machine.
    campaign.server.latency = 0.5
    make_answers(ANSWERS, nuggets=NUGGETS)
    campaign.start_worker(host_a)
    campaign.start_worker(host_b)
    campaign.manage("run_auto_assign", "--nuggets", "manual", "--name", "auto-hosts", "--queue", campaign.queue)
    job = Job.objects.get(output_name="auto-hosts")
    items = JobItem.objects.filter(job=job)

    def done_on(host: Host) -> int:
        # An item's claim names the host name of the worker that took it ("host:pid:tag").
        return items.filter(status="done", claimed_by__startswith=f"{host.name}:").count()

    def busy_on(host: Host) -> bool:
        return items.filter(status="claimed", claimed_by__startswith=f"{host.name}:").exists()

    # Killed while it holds an item (an item is claimed for its two calls, a second or more), after both did some.
    wait_for(
        lambda: done_on(host_a) >= 2 and done_on(host_b) >= 2 and busy_on(host_a),
        timeout=120,
        failure=lambda: (
            f"both hosts did not take items: {list(items.values_list('status', 'claimed_by'))}" + campaign.worker_logs()
        ),
    )
    campaign.kill(host_a)
    killed_at = time.time()  # host-a, dead, took no message later

    # host-b works through what the broker still holds; what host-a held stays claimed by the dead worker.
    def host_b_finished() -> bool:
        # Nothing waits in the queue, host-b holds no item, and every message taken since host-a died has been
        # acknowledged (a worker acks once the item is stored): only what host-a took stays unacknowledged.
        return campaign.queue_length() == 0 and campaign.taken_unacked(since=killed_at) == 0 and not busy_on(host_b)

    wait_for(
        host_b_finished,
        timeout=120,
        failure=lambda: (
            f"host-b did not finish: {campaign.queue_length()} message(s) queued, "
            f"{campaign.taken_unacked(since=killed_at)} taken and unacknowledged, "
            f"{list(items.exclude(status='done').values_list('status', 'claimed_by'))}" + campaign.worker_logs()
        ),
    )
    # Read after host-b settled: a commit host-a sent just before it died may have landed since.
    done_by_a = done_on(host_a)
    assert items.filter(status="done").count() < ANSWERS, "the job finished before host-a was killed"
    stranded = set(items.filter(status="claimed").values_list("key", flat=True))
    assert stranded, "host-a died holding no item"
    assert not items.filter(status="claimed").exclude(claimed_by__startswith=f"{host_a.name}:").exists()

    out = campaign.manage("run_auto_assign", "--resume", str(job.pk), "--wait")
    job.refresh_from_db()
    assert (job.status, job.done_items, job.failed_items) == ("done", ANSWERS, 0), out
    assert items.filter(status="done").count() == ANSWERS

    # Both hosts did items; what host-a had done before it died stayed done, and no item went back to it.
    assert done_on(host_a) == done_by_a >= 2
    assert done_on(host_b) == ANSWERS - done_by_a
    # The items the dead worker held were claimed again, on host-b.
    assert all(item.attempts == 2 for item in items.filter(key__in=stranded))

    # No item lost or done twice: each (answer, nugget) labelled once...
    labels = AssignmentLabel.objects.filter(assigner="auto-hosts", job=job)
    assert labels.count() == ANSWERS * NUGGETS
    assert labels.values("answer", "nugget").distinct().count() == ANSWERS * NUGGETS
    # ... and each answer's calls paid for once: a resumed item reuses the calls its dead worker had logged.
    paid = LLMCall.objects.filter(job=job, from_cache=False)
    per_item = paid.values("item").annotate(calls=Count("id"))
    assert sorted(row["calls"] for row in per_item) == [CALLS_PER_ANSWER] * ANSWERS
    assert not paid.exclude(error="").exists()
    # The server saw those calls, and more only for the killed worker's calls not yet logged: an item's asks go out
    # together while no thread waits for a slot, so each thread may have had all its item's calls in flight (each is
    # logged as its answer comes; one after the other, a call is logged before the next is sent).
    assert 0 <= campaign.server.count - ANSWERS * CALLS_PER_ANSWER <= THREADS_PER_WORKER * CALLS_PER_ANSWER

    # The two machines' calls overlapped, up to the shared cap and never past it.
    assert campaign.server.max_in_flight == LLM_CONCURRENCY

    # Every worker connection came from a host's own address, through the bridge.
    addresses = {host_a.address, host_b.address}
    for service, forwarder in campaign.forwarders.items():
        assert set(forwarder.peers) == addresses, (service, forwarder.peers)
