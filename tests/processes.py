"""The processes the tests start, stopped again with everything they started, whatever the test's outcome.

A test that starts a process that may outlive a call (a worker, `bin/demo` and its servers) starts it with
`start` (or `running`, which stops it on the way out) and stops it with `stop` or `kill`. A process started so

- runs in a session of its own, so that its process group can be signalled whole;
- carries a mark in its environment, ASSESSOR_TEST_PROCESS=<this run>/<its number>, which every process it
  starts inherits, even one that leaves its group (bin/demo runs each server in a session of its own) or
  outlives its parent: `stop` finds the whole tree by it;
- is sent SIGTERM if the test process dies without its clean-up (killed, out of memory): a parent-death
  signal (`setpriv --pdeathsig`, util-linux), which tells it to stop as a service manager would. It is
  tied to the thread that started the process: start processes from the test's own thread.

`stop` sends the process group its stop signal, waits a bounded time for the process and its tree, then
SIGKILLs the group and every process still carrying the mark.

The module is a pytest plugin too (tests/conftest.py takes its hooks): at the start of the session the
run's own mark goes into os.environ, so that every process the tests start by any means carries it; at the
end, whatever of the run is still alive (a child of the test process, or a process with the run's mark) is
killed, named in a section of the summary, and fails the run.
"""

import os
import secrets
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

MARK = "ASSESSOR_TEST_PROCESS"
# This run's mark: below the mark of the run that started this one, if a test runs the tests.
RUN = "/".join(filter(None, [os.environ.get(MARK, ""), f"{os.getpid()}-{secrets.token_hex(3)}"]))
STOP_SECONDS = 30.0  # how long a process and its tree have to stop before they are killed
SETPRIV = shutil.which("setpriv")
STOP_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class _Started:
    mark: str
    stop_signal: int
    stop_seconds: float


_started: dict[int, _Started] = {}
_count = 0


def mark_this_run() -> None:
    """Mark every process this test process starts from now on (their children inherit it)."""
    os.environ[MARK] = RUN


def start(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    stop_signal: int = signal.SIGTERM,
    stop_seconds: float = STOP_SECONDS,
    **popen: Any,
) -> subprocess.Popen:
    """`subprocess.Popen(args, ...)` in a session of its own, marked, told to stop when this process dies.

    `stop_signal` is what `stop` sends its group first (SIGINT for a script that stops on Ctrl-C), and
    `stop_seconds` how long `stop` then waits before killing what is left of the tree.
    """
    global _count
    _count += 1
    mark = f"{RUN}/{_count}"
    environment = dict(os.environ if env is None else env)
    environment[MARK] = mark
    command = [*([SETPRIV, "--pdeathsig", "TERM", "--"] if SETPRIV else []), *args]
    with _stop_signals_not_ignored():
        process = subprocess.Popen(command, env=environment, start_new_session=True, **popen)
    _started[process.pid] = _Started(mark, stop_signal, stop_seconds)
    if SETPRIV:
        _past_setpriv(process)
    return process


def _past_setpriv(process: subprocess.Popen) -> None:
    """Until setpriv has set the parent-death signal and run the command (a test process that died before
    would leave it without)."""
    setpriv = os.path.realpath(SETPRIV or "")
    deadline = time.monotonic() + 10
    while process.poll() is None and time.monotonic() < deadline:
        try:
            if os.readlink(f"/proc/{process.pid}/exe") != setpriv:
                return
        except OSError:
            return
        time.sleep(0.001)


@contextmanager
def _stop_signals_not_ignored() -> Iterator[None]:
    """A test run in the background (`bin/test &` from a script) ignores SIGINT and SIGQUIT, and would pass that
    on to what it starts: a script could not trap them, and would not stop on the Ctrl-C a test sends it. So they
    (and TERM and HUP, if ignored too) are not ignored while a process is started."""
    ignored = []
    if threading.current_thread() is threading.main_thread():
        ignored = [n for n in STOP_SIGNALS if signal.getsignal(n) == signal.SIG_IGN]
    for number in ignored:
        signal.signal(number, signal.SIG_DFL)
    try:
        yield
    finally:
        for number in ignored:
            signal.signal(number, signal.SIG_IGN)


@contextmanager
def running(args: Sequence[str], **options: Any) -> Iterator[subprocess.Popen]:
    """`start(args, **options)`, stopped with its whole tree on the way out, failed test or not."""
    process = start(args, **options)
    try:
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen, *, seconds: float | None = None) -> None:
    """Stop `process` and every process it started: its stop signal to its group, up to `seconds` (its
    `stop_seconds`) for it and its tree to end, then SIGKILL to its group and to whatever carries its mark."""
    started = _started.get(process.pid)
    mark = started.mark if started else None
    seconds = (started.stop_seconds if started else STOP_SECONDS) if seconds is None else seconds
    deadline = time.monotonic() + seconds
    stop_signal = started.stop_signal if started else signal.SIGTERM
    if seconds > 0 and process.poll() is None:
        _signal_group(process.pid, stop_signal)
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            pass
    if mark and seconds > 0 and process.poll() is not None:
        # The process ended, but not all it started did: left behind, outside its group (a parent that did
        # not stop its children), they are told to stop too, in the time left.
        for pid in marked(mark):
            _signal(pid, stop_signal)
        while time.monotonic() < deadline and marked(mark):
            time.sleep(0.1)
    if process.poll() is None:  # not yet waited for: its id, and its group's, are no one else's
        _signal_group(process.pid, signal.SIGKILL)
    if mark:
        for pid in marked(mark):
            _signal(pid, signal.SIGKILL)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass  # a process in uninterruptible sleep: the session's check reports it if it stays
    killed_by = time.monotonic() + 10
    while mark and marked(mark) and time.monotonic() < killed_by:
        time.sleep(0.05)
    _started.pop(process.pid, None)


def kill(process: subprocess.Popen) -> None:
    """SIGKILL `process` and every process it started, at once (as a machine that loses its power)."""
    stop(process, seconds=0)


def tree(process: subprocess.Popen) -> list[int]:
    """The processes alive of those `process` (started by `start`) started, itself included, wherever they are."""
    return marked(_started[process.pid].mark)


def marked(mark: str) -> list[int]:
    """The processes alive (zombies left out) that carry `mark`, or a mark below it."""
    return [proc.pid for proc in _processes() if proc.mark is not None and _below(proc.mark, mark)]


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    mark: str | None
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid} (parent {self.ppid}): {self.command}"


def leftovers() -> list[Proc]:
    """What of this run is alive besides the test process: its children, and every process with its mark."""
    me = os.getpid()
    return [
        proc
        for proc in _processes()
        if proc.pid != me and (proc.ppid == me or (proc.mark is not None and _below(proc.mark, RUN)))
    ]


def leftovers_stop(*, grace: float = 5.0) -> list[Proc]:
    """`leftovers()` still there after `grace` seconds (a process on its way out, as Chromium's crash handler
    after the browser, is given that long), each SIGKILLed with its process group; returns them."""
    deadline = time.monotonic() + grace
    while (found := leftovers()) and time.monotonic() < deadline:
        time.sleep(0.1)
    for proc in found:
        try:
            if os.getpgid(proc.pid) == proc.pid:
                _signal_group(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _signal(proc.pid, signal.SIGKILL)
    for proc in found:
        if proc.ppid == os.getpid():
            try:
                os.waitpid(proc.pid, 0)
            except ChildProcessError:
                pass
    return found


def alive(pid: int) -> bool:
    """`pid` runs (a zombie, ended but not yet waited for by its parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def listening(port: int, host: str = "127.0.0.1") -> bool:
    """Something accepts connections on `port`."""
    try:
        socket.create_connection((host, port), timeout=1).close()
    except OSError:
        return False
    return True


def _below(value: str, mark: str) -> bool:
    return value == mark or value.startswith(mark + "/")


def _processes() -> Iterator[Proc]:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            environ = (entry / "environ").read_bytes()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue  # ended meanwhile, or another user's
        # After the command's name in parentheses: state, parent, ...
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state in ("Z", "X"):
            continue
        mark = None
        for variable in environ.split(b"\0"):
            if variable.startswith(MARK.encode() + b"="):
                mark = variable.split(b"=", 1)[1].decode(errors="replace")
        yield Proc(int(entry.name), int(ppid), mark, command)


def _signal_group(pgid: int, number: int) -> None:
    try:
        os.killpg(pgid, number)
    except (ProcessLookupError, PermissionError):
        pass


def _signal(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except (ProcessLookupError, PermissionError):
        pass


# The plugin: tests/conftest.py imports these hooks.
_LEFT = pytest.StashKey[list[Proc]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    mark_this_run()


@pytest.hookimpl(trylast=True)  # after the session's fixtures are torn down (pytest's own runner does that)
def pytest_sessionfinish(session: pytest.Session) -> None:
    left = leftovers_stop()
    session.config.stash[_LEFT] = left
    if left:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    left = config.stash.get(_LEFT, [])
    if left:
        terminalreporter.write_sep("=", f"{len(left)} processes left running by the tests (now killed)", red=True)
        for proc in left:
            terminalreporter.write_line(f"left running: {proc}", red=True)
