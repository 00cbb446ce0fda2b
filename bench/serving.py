"""The site as it is deployed, started from here: `bin/serve` in a process group of its own, on a
free port, against the database this process uses, until stopped.

The deployment test and `bench_load` use it, so that both measure what README tells people to run.
"""

import os
import secrets
import signal
import socket
import subprocess
import time
from pathlib import Path

from django.conf import settings
from django.db import connection

from bench.http_site import Visitor

REPO = Path(settings.BASE_DIR)
# The test run's own variables are not a deployment's.
NOT_PASSED_ON = {"DJANGO_ALLOW_ASYNC_UNSAFE", "DEBUG", "TEST_DATABASE_NAME"}


def database_url(*, host: str | None = None, port: int | None = None) -> str:
    """The URL of the database this process is connected to (a test or throw-away one included), for another
    process; `host` and `port` reach it at another address (a forwarder's)."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db.get("USER") or ""
    if db.get("PASSWORD"):
        auth += f":{db['PASSWORD']}"
    host = host or db.get("HOST") or "127.0.0.1"
    port = port or db.get("PORT") or 5432
    return f"postgres://{auth}@{host}:{port}/{db['NAME']}"


def free_port() -> int:
    """A port nothing listens on now: bound by the system, then let go."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ServedSite:
    """`bin/serve ROLE` with the settings given; its output goes to `log`."""

    def __init__(self, *, role: str, var_dir: Path, log: Path, **variables: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.env = {key: value for key, value in os.environ.items() if key not in NOT_PASSED_ON}
        self.env.update(
            DATABASE_URL=database_url(),
            SECRET_KEY=secrets.token_urlsafe(50),
            DEBUG="0",
            ASSESSOR_VAR_DIR=str(var_dir),
            WEB_BIND=f"127.0.0.1:{self.port}",
            PYTHONPATH=str(REPO),
        )
        self.env.update(variables)
        with log.open("ab") as output:
            self.process = subprocess.Popen(
                [str(REPO / "bin" / "serve"), role],
                cwd=REPO,
                env=self.env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_ready(self, *, timeout: float = 180.0) -> None:
        """Until the web server answers its health endpoint (with 200 or 503: it answers)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"bin/serve ended with {self.process.returncode}:\n{self.log_tail()}")
            visitor = Visitor(self.url, timeout=5)
            try:
                visitor.get("/health/")
                return
            except OSError:
                time.sleep(0.5)
            finally:
                visitor.close()
        raise RuntimeError(f"bin/serve did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def cpu_seconds(self) -> float:
        """CPU time (user and system) of every process in bin/serve's group so far, ended children included."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            # After the name: state, ppid, pgrp, ..., utime and stime at 11 and 12, children's at 13 and 14.
            if int(fields[2]) == self.process.pid:
                total += sum(int(value) for value in fields[11:15])
        return total / tick

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        # As Ctrl-C does: gunicorn stops at once (nothing is in flight here), the worker after its items.
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
