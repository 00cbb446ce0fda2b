"""The health endpoint: reachable without login, 200 when the database and the broker answer, 503 naming what is down."""

import socket

import pytest
from django.urls import reverse


def closed_port() -> int:
    """A port nothing listens on: bound, then let go."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.django_db
def test_it_answers_ok_without_login(client):
    response = client.get(reverse("health"))
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_it_names_the_broker_when_the_broker_is_down(client, settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{closed_port()}/0"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    response = client.get(reverse("health"))
    assert response.status_code == 503
    assert response.json() == {"status": "down: broker", "checks": {"database": "ok", "broker": "down"}}


@pytest.mark.django_db
def test_it_names_the_database_when_the_database_is_down(client, monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("connection refused")

    # The connection's cursor is where a database that went away fails first.
    monkeypatch.setattr("assessor.site.health.connection.cursor", refuse)
    response = client.get(reverse("health"))
    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "down", "broker": "ok"}
    assert response.json()["status"] == "down: database"


def test_it_takes_no_post(client):
    assert client.post(reverse("health")).status_code == 405
