"""Settings come from the environment; a wrong value stops the start with the variable's name."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The settings read in processes of their own, on a SQLite file in tmp_path or with no connection.
pytestmark = pytest.mark.database_independent


def _manage_check(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environment.update(ASSESSOR_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="assessor.project.settings", **env)
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_defaults_start_with_no_configuration(tmp_path):
    result = _manage_check(tmp_path)
    assert result.returncode == 0, result.stderr
    # The per-checkout secret key was made in the var folder.
    assert (tmp_path / "secret_key").read_text().strip()


@pytest.mark.parametrize(
    "name, value",
    [
        ("DEBUG", "maybe"),
        ("DATABASE_URL", "nonsense://x"),
        ("CELERY_BROKER_URL", "ftp://x"),
        ("LLM_TIMEOUT", "abc"),
        ("LLM_CONCURRENCY", "0"),
        ("LLM_BASE_URL", "ftp://example"),
        ("DATABASE_PREPARE_THRESHOLD", "often"),
        ("DATABASE_PREPARE_THRESHOLD", "-1"),
    ],
)
def test_a_wrong_value_fails_at_start_naming_the_variable(tmp_path, name, value):
    result = _manage_check(tmp_path, **{name: value})
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line
    assert name in last_line
    assert repr(value) in last_line


def test_the_file_system_broker_writes_only_under_the_var_folder(tmp_path):
    """Sending a task (as the web app does) leaves nothing in the working directory, e.g. kombu's control/."""
    var, cwd = tmp_path / "var", tmp_path / "cwd"
    cwd.mkdir()
    environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL"}}
    environment.update(
        ASSESSOR_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="assessor.project.settings", PYTHONPATH=str(REPO)
    )
    script = "import django; django.setup(); from assessor.project.celery import app; app.send_task('probe.task')"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, env=environment, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in cwd.iterdir()) == []
    assert (var / "broker" / "control" / "celery.exchange").is_file()
    assert len(list((var / "broker" / "queue").iterdir())) == 1


def test_the_database_uploads_and_staged_imports_are_the_owners_alone(tmp_path):
    """The SQLite file holds sessions and password hashes, uploads and staged imports the site's data: 0600/0700,
    like the secret key, whatever the umask; a file left readable by an older version is closed too."""
    (tmp_path / "uploads").mkdir(mode=0o755)
    (tmp_path / "uploads").chmod(0o755)
    script = "import django; django.setup(); from assessor.importing.staging import staging_directory; staging_directory()"
    environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "UPLOAD_DIR"}}
    environment.update(ASSESSOR_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="assessor.project.settings", PYTHONPATH=str(REPO))
    result = subprocess.run(
        ["sh", "-c", f"umask 022 && {sys.executable} -c '{script}'"], cwd=REPO, env=environment, capture_output=True,
        text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    modes = {name: (tmp_path / name).stat().st_mode & 0o777 for name in ("assessor.sqlite3", "uploads", "uploads/incoming", "import-staging", "secret_key")}
    assert modes == {
        "assessor.sqlite3": 0o600, "uploads": 0o700, "uploads/incoming": 0o700, "import-staging": 0o700, "secret_key": 0o600,
    }


def _database_options(tmp_path: Path, **env: str) -> dict:
    """The database OPTIONS the project's settings make from this environment (no connection is opened)."""
    environment = {k: v for k, v in os.environ.items() if k != "DATABASE_PREPARE_THRESHOLD"}
    environment.update(ASSESSOR_VAR_DIR=str(tmp_path), PYTHONPATH=str(REPO), **env)
    script = "from assessor.project import settings; print(repr(settings.DATABASES['default'].get('OPTIONS', {})))"
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return ast.literal_eval(result.stdout)


@pytest.mark.parametrize(
    "threshold, prepared",
    [(None, 5), ("0", 0), ("12", 12), ("off", None), ("OFF", None)],
)
def test_postgresql_prepares_what_a_connection_runs_often(tmp_path, threshold, prepared):
    env = {"DATABASE_URL": "postgres://someone@db.example.org:5432/assessor"}
    if threshold is not None:
        env["DATABASE_PREPARE_THRESHOLD"] = threshold
    options = _database_options(tmp_path, **env)
    assert options["prepare_threshold"] == prepared
    # Django's own cursors keep binding on the client (no limit on a statement's number of values).
    assert "server_side_binding" not in options


def test_sqlite_has_no_postgresql_options(tmp_path):
    options = _database_options(tmp_path, DATABASE_URL=f"sqlite:///{tmp_path / 'site.sqlite3'}")
    assert "prepare_threshold" not in options
