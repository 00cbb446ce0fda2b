"""`bin/serve` refuses what would make a broken deployment before it starts anything."""

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def serve(*arguments: str, **env: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "SECRET_KEY"}
    environment.update(env)
    return subprocess.run(
        [str(REPO / "bin" / "serve"), *arguments], cwd=REPO, env=environment, capture_output=True, text=True, timeout=60
    )


def test_it_refuses_to_start_without_a_secret_key():
    result = serve()
    assert result.returncode == 2
    assert "set SECRET_KEY" in result.stderr
    assert result.stdout == ""  # nothing started, not even the virtual environment's check


def test_it_names_the_roles_it_knows():
    result = serve("webserver", SECRET_KEY="x" * 50)
    assert result.returncode == 2
    assert "unknown role webserver: use all, web or worker" in result.stderr


def test_its_help_lists_the_roles_and_variables():
    result = serve("--help")
    assert result.returncode == 0
    for word in ("bin/serve web", "bin/serve worker", "SECRET_KEY", "WEB_WORKERS", "WEB_THREADS", "GUNICORN_CMD_ARGS"):
        assert word in result.stdout
