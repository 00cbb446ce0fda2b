"""The tests leave no process behind (tests/processes.py): a process a test starts is stopped with its whole tree
when the test fails, when the tree ignores its stop signal, when the test process dies; and a run that leaves one
is failed at its end."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests import processes

REPO = Path(__file__).resolve().parents[2]
# Processes and their stopping: no database.
pytestmark = pytest.mark.database_independent


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _until(condition: Callable[[], bool], seconds: float, failure: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(failure)
        time.sleep(0.1)


# A parent that starts two servers each in a session of its own (as bin/demo does) and does not stop them:
# a web server on PORT and a sleeper, outside the parent's process group.
TREE = """
setsid {python} -m http.server {port} --bind 127.0.0.1 >/dev/null 2>&1 &
setsid sleep 300 &
wait
"""


def test_a_failing_test_leaves_nothing_of_what_it_started_even_outside_the_group():
    port = _free_port()
    tree: list[int] = []
    with pytest.raises(RuntimeError, match="the test fails"):
        with processes.running(["bash", "-c", TREE.format(python=sys.executable, port=port)]) as parent:
            _until(lambda: processes.listening(port), 30, f"the tree's server did not listen on {port}")
            _until(lambda: len(processes.tree(parent)) == 3, 10, "the tree is not three processes")
            tree = processes.tree(parent)
            groups = {os.getpgid(pid) for pid in tree}
            assert len(groups) == 3  # the parent's own group reaches one of them
            raise RuntimeError("the test fails")
    assert parent.returncode is not None
    assert [pid for pid in tree if processes.alive(pid)] == []
    assert not processes.listening(port)


def test_a_tree_that_ignores_its_stop_signal_is_killed_once_its_time_is_up():
    # SIGTERM ignored by the shell and by the sleeper it starts (an ignored signal stays ignored across exec).
    parent = processes.start(["bash", "-c", "trap '' TERM; sleep 300 & wait"], stop_seconds=1)
    _until(lambda: len(processes.tree(parent)) == 2, 10, "the shell did not start its sleeper")
    tree = processes.tree(parent)
    began = time.monotonic()
    processes.stop(parent)
    assert time.monotonic() - began < 10
    assert parent.returncode == -signal.SIGKILL
    assert [pid for pid in tree if processes.alive(pid)] == []


@pytest.mark.skipif(processes.SETPRIV is None, reason="the parent-death signal needs util-linux's setpriv")
def test_what_a_test_process_started_stops_when_that_process_dies_without_its_clean_up():
    # A stand-in for the test process: it starts a sleeper as the tests do, says its id, and is killed.
    code = textwrap.dedent("""
        from tests import processes
        sleeper = processes.start(["sleep", "300"])
        print(sleeper.pid, flush=True)
        processes.time.sleep(300)
    """)
    with processes.running([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True) as stand_in:
        assert stand_in.stdout is not None
        sleeper = int(stand_in.stdout.readline())
        assert processes.alive(sleeper)
        os.kill(stand_in.pid, signal.SIGKILL)
        _until(lambda: not processes.alive(sleeper), 10, f"the sleeper {sleeper} outlived the process that started it")


LEAKING_TEST = """
import subprocess
from pathlib import Path

from tests import processes


def test_starts_a_process_and_forgets_it():
    sleeper = subprocess.Popen(["sleep", "300"])
    Path("sleeper.pid").write_text(str(sleeper.pid))


def test_starts_a_process_and_stops_it():
    with processes.running(["sleep", "300"]):
        pass
"""


def test_a_run_that_leaves_a_process_running_fails_and_names_it(tmp_path):
    (tmp_path / "test_leaking.py").write_text(LEAKING_TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "pytest", "-p", "tests.processes", "-p", "no:django", "-p", "no:cacheprovider"]
    with processes.running([*command, "-q", "test_leaking.py"], cwd=tmp_path, env=environment,
                           stdout=subprocess.PIPE, text=True) as run:  # fmt: skip
        output, _ = run.communicate(timeout=120)
    sleeper = int((tmp_path / "sleeper.pid").read_text())
    assert run.returncode == pytest.ExitCode.TESTS_FAILED, output
    assert "1 processes left running by the tests (now killed)" in output
    assert f"left running: pid {sleeper} (parent {run.pid}): sleep 300" in output
    assert "2 passed" in output
    assert not processes.alive(sleeper)

    # The same run without the forgotten process passes.
    with processes.running([*command, "-q", "test_leaking.py", "-k", "stops_it"], cwd=tmp_path, env=environment,
                           stdout=subprocess.PIPE, text=True) as run:  # fmt: skip
        output, _ = run.communicate(timeout=120)
    assert run.returncode == pytest.ExitCode.OK, output
    assert "left running" not in output


def test_a_test_run_in_the_background_still_stops_what_it_started_with_ctrl_c():
    # Started with `&` from a script, the test process ignores SIGINT; what it starts must not inherit that, or a
    # script's trap (bin/demo's) could not be set, and the Ctrl-C a test sends would do nothing.
    trapping = "trap 'exit 7' INT; while :; do sleep 0.1; done"
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        shell = processes.start(["bash", "-c", trapping])
    finally:
        signal.signal(signal.SIGINT, before)
    try:
        time.sleep(0.5)  # the trap set
        os.killpg(shell.pid, signal.SIGINT)
        assert shell.wait(timeout=10) == 7
    finally:
        processes.stop(shell)
