"""Deployment security: HTTPS settings behind one variable, `check --deploy` clean, a private key file."""

import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.checks.registry import registry
from django.test import RequestFactory

from assessor.project.checks import allowed_hosts_check
from assessor.project.security import client_address_behind_proxy, secret_key_file_read

REPO = Path(__file__).resolve().parents[2]
# Settings and `check --deploy` in processes of their own, on a SQLite file in tmp_path.
pytestmark = pytest.mark.database_independent
DEPLOY_WARNINGS = ("W004", "W008", "W012", "W016")


def manage(tmp_path: Path, *arguments: str, **env: str) -> subprocess.CompletedProcess:
    # The test run's own settings (pytest sets DJANGO_ALLOW_ASYNC_UNSAFE) are not a deployment's.
    unset = {"DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    environment = {k: v for k, v in os.environ.items() if k not in unset}
    environment.update(ASSESSOR_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="assessor.project.settings", **env)
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def deployment(**env: str) -> dict[str, str]:
    """The deployment configuration README describes."""
    return {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "assessor.example.org",
        "ASSESSOR_REQUIRE_SECRET_KEY": "1",
        "ASSESSOR_HTTPS": "1",
        **env,
    }


def test_check_deploy_is_clean_in_the_deployment_configuration(tmp_path):
    result = manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING", **deployment())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_without_the_https_variable_check_deploy_names_what_is_missing(tmp_path):
    result = manage(tmp_path, "check", "--deploy", **deployment(ASSESSOR_HTTPS="0"))
    for warning in DEPLOY_WARNINGS:
        assert f"security.{warning}" in result.stderr


def test_check_deploy_warns_of_an_allowed_host_that_lets_any_host_in(tmp_path):
    result = manage(
        tmp_path, "check", "--deploy", "--fail-level", "WARNING", **deployment(ALLOWED_HOSTS="assessor.example.org,*")
    )
    assert result.returncode == 1
    assert "?: (assessor.W001) ALLOWED_HOSTS holds '*': the site answers a request for any host name" in result.stderr
    assert "HINT: Set ALLOWED_HOSTS to the host names the site is served under" in result.stderr


@pytest.mark.parametrize(
    ("hosts", "ids"),
    [
        (["*"], ["assessor.W001"]),
        (["a.example.org", "*"], ["assessor.W001"]),
        ([".example.org"], []),
        (["a.example.org"], []),
    ],
)
def test_only_the_any_host_entry_is_warned_of(settings, hosts, ids):
    settings.ALLOWED_HOSTS = hosts
    assert [message.id for message in allowed_hosts_check()] == ids


def test_the_allowed_hosts_check_runs_with_deploy_only():
    deploy = {check.__name__ for check in registry.get_checks(include_deployment_checks=True)}
    plain = {check.__name__ for check in registry.get_checks(include_deployment_checks=False)}
    assert "allowed_hosts_check" in deploy - plain


def test_one_variable_turns_on_the_https_settings(tmp_path):
    code = (
        "from django.conf import settings as s; "
        "print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS, "
        "s.SECURE_PROXY_SSL_HEADER)"
    )
    result = manage(tmp_path, "shell", "--no-imports", "-c", code, ASSESSOR_HTTPS="1")
    assert result.stdout.split("\n")[0] == "True True True 31536000 ('HTTP_X_FORWARDED_PROTO', 'https')", result.stderr
    result = manage(tmp_path, "shell", "--no-imports", "-c", code, ASSESSOR_HTTPS="1", ASSESSOR_HSTS_SECONDS="3600")
    assert " 3600 " in result.stdout
    result = manage(tmp_path, "shell", "--no-imports", "-c", code)
    assert result.stdout.split("\n")[0] == "False False False 0 None", result.stderr


def test_the_secret_key_file_is_written_for_its_owner_only(tmp_path):
    result = manage(tmp_path, "check")
    assert result.returncode == 0, result.stderr
    key_file = tmp_path / "secret_key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert len(key_file.read_text().strip()) >= 50


def test_a_readable_key_file_of_an_older_install_is_made_private(tmp_path):
    key_file = tmp_path / "secret_key"
    key_file.write_text("an-existing-key\n")
    key_file.chmod(0o644)
    assert secret_key_file_read(key_file) == "an-existing-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_behind_the_proxy_the_client_address_is_the_one_it_appended():
    request = RequestFactory().get("/", HTTP_X_FORWARDED_FOR="6.6.6.6, 10.1.2.3", REMOTE_ADDR="127.0.0.1")
    assert client_address_behind_proxy(request) == "10.1.2.3"
    assert client_address_behind_proxy(RequestFactory().get("/", REMOTE_ADDR="127.0.0.1")) == "127.0.0.1"
