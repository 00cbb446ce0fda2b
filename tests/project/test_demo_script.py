"""`bin/demo --fake-llm`: the demo with the project's fake LLM server, running LLM calls at the concurrency it shows."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.request import urlopen

import pytest

from tests import processes

REPO = Path(__file__).resolve().parents[2]
# The demo runs on a SQLite file of its own in tmp_path, whatever the suite's database.
pytestmark = [pytest.mark.slow, pytest.mark.database_independent]
# The demo's campaign of the TREC topics: with the kiddie campaign beside it, a command names its campaign.
TREC_DEMO = "trec-2024-rag-demo"


def _free_port_triple() -> int:
    """A port whose next two are free too (the demo puts its fake LLM servers on PORT + 1 and PORT + 2)."""
    for _ in range(50):
        with socket.socket() as first, socket.socket() as second, socket.socket() as third:
            first.bind(("127.0.0.1", 0))
            port = first.getsockname()[1]
            try:
                second.bind(("127.0.0.1", port + 1))
                third.bind(("127.0.0.1", port + 2))
            except OSError:
                continue
            return port
    raise RuntimeError("no three free ports in a row")


def _max_in_flight(spans: list[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    current = highest = 0
    for _, step in events:
        current += step
        highest = max(highest, current)
    return highest


def _demo_environment(tmp_path: Path) -> tuple[dict[str, str], int]:
    """The environment bin/demo runs in (its data in tmp_path, on ports of its own), and its PORT."""
    port = _free_port_triple()
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "DATABASE_URL", "CELERY_", "DJANGO_"))
    }
    environment.update(ASSESSOR_VAR_DIR=str(tmp_path), PORT=str(port))
    return environment, port


def _demo_started(environment: dict[str, str]) -> contextlib.AbstractContextManager[subprocess.Popen]:
    """bin/demo --fake-llm, stopped as Ctrl-C stops it, with everything it started, failed test or not."""
    return processes.running(
        ["bin/demo", "--fake-llm"],
        cwd=REPO,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        stop_signal=signal.SIGINT,
        stop_seconds=60,
    )


def _banner(demo: subprocess.Popen) -> str:
    """What bin/demo prints until it says it runs (its second fake endpoint the last line)."""
    assert demo.stdout is not None
    deadline = time.monotonic() + 240
    banner = ""
    while "turns every label round" not in banner and time.monotonic() < deadline:
        line = demo.stdout.readline()
        if not line:
            break
        banner += line
    return banner


def test_the_demo_runs_an_llm_job_on_the_fake_server_eight_calls_at_once(tmp_path):
    environment, port = _demo_environment(tmp_path)
    before = sorted(path.name for path in REPO.iterdir())
    with _demo_started(environment) as demo:
        banner = _banner(demo)
        assert f"LLM jobs go to the fake LLM server at http://127.0.0.1:{port + 1}/v1" in banner
        # The job is launched as an organizer would on the command line, against the demo's database;
        # the demo's worker runs it (the command only queues the items and waits).
        job_env = {**environment, "LLM_BASE_URL": f"http://127.0.0.1:{port + 1}/v1", "LLM_MODEL": "fake-llm"}
        job_env["LLM_API_KEY"] = "demo-key"
        launch = subprocess.run(
            [sys.executable, "manage.py", "run_auto_assign", "--name", "tried", "--nuggets", "nist"]
            + ["--topics", "2024-213817", "--wait", "--campaign", TREC_DEMO],
            cwd=REPO,
            env=job_env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert launch.returncode == 0, launch.stderr
        report = subprocess.run(
            [sys.executable, "-c", SPANS],
            cwd=REPO,
            env={**environment, "DJANGO_SETTINGS_MODULE": "assessor.project.settings"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert report.returncode == 0, report.stderr
        lines = report.stdout.split("\n")
        status, model = lines[0].split()
        spans = [(float(a), float(b)) for a, b in (line.split() for line in lines[1:] if line)]
        assert (status, model) == ("done", "fake-llm")
        assert len(spans) >= 16
        # The worker used to run 2 processes: at most 2 calls at once, whatever the page promised. The call log's
        # latencies are the requests' own (not the wait for a slot), so their spans overlap as the calls did; the
        # server's count of the calls it had at once shows the limit held (the worker has two threads a call).
        assert _max_in_flight(spans) > 2
        with urlopen(f"http://127.0.0.1:{port + 1}/stats", timeout=10) as response:
            served = json.load(response)
        assert 2 < served["max_in_flight_by_model"]["fake-llm"] <= 8

        # The second endpoint the demo offers: the same job on the flipped "model", compared with the first.
        flipped_env = {**job_env, "LLM_ENDPOINTS": str(tmp_path / "demo-endpoints.toml")}
        assert f"The endpoint fake-flipped (model fake-llm-flipped, {tmp_path}/demo-endpoints.toml)" in banner
        launch = subprocess.run(
            [sys.executable, "manage.py", "run_auto_assign", "--name", "flipped", "--nuggets", "nist"]
            + ["--topics", "2024-213817", "--endpoint", "fake-flipped", "--wait", "--campaign", TREC_DEMO],
            cwd=REPO,
            env=flipped_env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert launch.returncode == 0, launch.stderr
        compared = subprocess.run(
            [sys.executable, "manage.py", "metaeval", "--a", "nist/tried", "--b", "nist/flipped", "--json"]
            + ["--campaign", TREC_DEMO],
            cwd=REPO,
            env=flipped_env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert compared.returncode == 0, compared.stderr
        comparison = json.loads(compared.stdout)
        judges = {side: (judge["endpoint"], judge["model"]) for side, judge in comparison["judges"].items()}
        assert judges == {"a": ("default", "fake-llm"), "b": ("fake-flipped", "fake-llm-flipped")}
        # Every label turned round: nothing off the anti-diagonal (partial support stays put).
        counts = comparison["confusion"]["counts"]
        assert [counts[i][j] for i in range(3) for j in range(3) if i + j != 2] == [0] * 6
        assert counts[0][2] > 0

        # Ctrl-C: the demo stops, and everything it started stops before it ends.
        tree = processes.tree(demo)
        os.killpg(demo.pid, signal.SIGINT)
        assert demo.wait(timeout=60) == 130
        assert [pid for pid in tree if processes.alive(pid)] == []
        assert [p for p in (port, port + 1, port + 2) if processes.listening(p)] == []
    # Runtime files stay in ASSESSOR_VAR_DIR, none in the checkout.
    assert sorted(path.name for path in REPO.iterdir()) == before


def test_the_demo_stops_everything_it_started_when_terminated_with_its_output_closed(tmp_path):
    """As a service manager stops it (TERM to the script alone), after whatever read its output went away."""
    environment, port = _demo_environment(tmp_path)
    with _demo_started(environment) as demo:
        assert "turns every label round" in _banner(demo)
        tree = processes.tree(demo)
        assert len(tree) >= 6  # the script, its four servers, runserver's reloader and the server it runs
        assert all(processes.listening(p) for p in (port, port + 1, port + 2))
        assert demo.stdout is not None
        demo.stdout.close()
        demo.send_signal(signal.SIGTERM)
        assert demo.wait(timeout=60) == 143
        assert [pid for pid in tree if processes.alive(pid)] == []
        assert [p for p in (port, port + 1, port + 2) if processes.listening(p)] == []


# Each call's (start, end) in seconds, from its end time and latency.
SPANS = """
import django; django.setup()
from assessor.models import Job, LLMCall
job = Job.objects.latest("pk")
print(job.status, job.model)
for at, latency in LLMCall.objects.filter(item__job=job, from_cache=False).values_list("created_at", "latency_ms"):
    end = at.timestamp()
    print(end - latency / 1000, end)
"""
