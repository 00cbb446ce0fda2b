"""gunicorn's processes take new connections in turn (assessor/project/web_worker.py).

Real gunicorn, with the worker class `bin/serve` runs, serves an application that
answers with its process id; connections kept alive are opened one after the other,
as assessors sign in, and each process must hold as many as the others (one more at
most). With gunicorn's own gthread, the process that has just answered is still
awake and takes the next connection too: the same test, run with it, saw five of the
nine connections on one process of three.
"""

import http.client
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from assessor.project import web_worker
from bench.serving import free_port

REPO = Path(__file__).resolve().parents[2]
WORKER_CLASS = "assessor.project.web_worker.BalancedThreadWorker"


@pytest.fixture
def served(tmp_path):
    port = free_port()
    log = (tmp_path / "gunicorn.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "tests.project.pid_app:application", "--worker-class", WORKER_CLASS,
         "--workers", "3", "--threads", "2", "--bind", f"127.0.0.1:{port}", "--keep-alive", "60",
         "--no-control-socket"],
        cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        pids_ready(port, process, 3)
        yield port, process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        log.close()


def worker_pids(master: int) -> set[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return {int(pid) for pid in children}


def pids_ready(port: int, process: subprocess.Popen, workers: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "gunicorn stopped"
        if len(worker_pids(process.pid)) == workers:
            try:
                served_by(open_connection(port))
                return
            except OSError:
                pass
        time.sleep(0.1)
    raise AssertionError("gunicorn did not start")


def open_connection(port: int) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=30)


def served_by(connection: http.client.HTTPConnection) -> int:
    connection.request("GET", "/")
    response = connection.getresponse()
    assert response.status == 200 and response.getheader("Connection", "").lower() != "close"
    return int(response.read())


def sign_in_one_after_the_other(port: int, count: int) -> list[tuple[http.client.HTTPConnection, int]]:
    opened = []
    for _ in range(count):
        connection = open_connection(port)
        opened.append((connection, served_by(connection)))
        time.sleep(0.02)  # a person signs in after another; gunicorn's loop has turned meanwhile
    return opened


def test_kept_alive_connections_are_spread_evenly_over_the_processes(served):
    port, process = served
    opened = sign_in_one_after_the_other(port, 9)
    held = Counter(pid for _connection, pid in opened)
    assert set(held) == worker_pids(process.pid)
    assert sorted(held.values()) == [3, 3, 3]
    # Each connection stays with its process, as before.
    assert all(served_by(connection) == pid for connection, pid in opened)
    for connection, _pid in opened:
        connection.close()


def test_a_process_started_anew_takes_the_next_connections(served):
    port, process = served
    opened = sign_in_one_after_the_other(port, 6)
    killed = opened[0][1]
    os.kill(killed, signal.SIGKILL)  # as gunicorn's master kills a process past its timeout
    deadline = time.monotonic() + 30
    while killed in worker_pids(process.pid) or len(worker_pids(process.pid)) < 3:
        assert time.monotonic() < deadline, "gunicorn did not start a process again"
        time.sleep(0.1)
    time.sleep(0.5)  # the new process has claimed the slot of the killed one
    started = (worker_pids(process.pid) - {pid for _connection, pid in opened}).pop()
    more = sign_in_one_after_the_other(port, 3)
    # The two other processes hold two each, the new one none: it takes the next two, then the turns go round.
    assert [pid for _connection, pid in more][:2] == [started, started]
    for connection, _pid in opened + more:
        connection.close()


def test_after_a_reload_the_new_processes_take_the_connections_in_turn(served):
    port, process = served
    before = worker_pids(process.pid)
    os.kill(process.pid, signal.SIGHUP)  # gunicorn starts new processes and stops the old ones gracefully
    deadline = time.monotonic() + 30
    while worker_pids(process.pid) & before or len(worker_pids(process.pid)) < 3:
        assert time.monotonic() < deadline, "gunicorn did not replace its processes"
        time.sleep(0.1)
    opened = sign_in_one_after_the_other(port, 6)
    held = Counter(pid for _connection, pid in opened)
    assert set(held) == worker_pids(process.pid) and sorted(held.values()) == [2, 2, 2]
    for connection, _pid in opened:
        connection.close()


@pytest.fixture
def slots():
    """The shared slots of this process, emptied before and after."""

    def empty():
        for slot in range(web_worker.SLOTS):
            web_worker._pids[slot], web_worker._connections[slot], web_worker._written[slot] = 0, 0, 0.0

    empty()
    yield
    empty()


def test_a_process_killed_hung_or_stopping_holds_no_turn(slots):
    mine = web_worker.slot_claim(101)
    others = [web_worker.slot_claim(pid) for pid in (102, 103, 104)]
    assert mine == 0 and others == [1, 2, 3]
    for slot, count in zip(others, (4, 1, 3), strict=True):
        web_worker._connections[slot] = count
    assert web_worker.fewest_connections(besides=mine) == 1
    # The process holding one stops (gunicorn's `alive` off: it writes STOPPING) and takes no more connections.
    web_worker._written[2] = web_worker.STOPPING
    assert web_worker.fewest_connections(besides=mine) == 3
    # Another has not written its count for longer than STALE_SECONDS: killed, or its loop hung.
    web_worker._written[3] = time.monotonic() - web_worker.STALE_SECONDS - 0.1
    assert web_worker.fewest_connections(besides=mine) == 4
    # Their slots go to the next processes started; one given back is free at once.
    assert web_worker.slot_claim(105) == 2
    web_worker.slot_release(1, 102)
    assert web_worker.slot_claim(106) == 1
    assert web_worker.fewest_connections(besides=mine) == 0
