"""Failed logins are throttled per account and address: past the limit even the right password is refused."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.builders import make_user

pytestmark = pytest.mark.django_db

PASSWORD = "the-right-password"
HOME = "10.0.0.1"


@pytest.fixture
def account():
    return make_user(password=PASSWORD)


def log_in(client, user: User, password: str, *, address: str = HOME):
    return client.post(reverse("login"), {"username": user.username, "password": password}, REMOTE_ADDR=address)


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_after_the_failure_limit_the_right_password_is_refused(client, account, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in(client, account, "wrong").status_code == 200
    response = log_in(client, account, "wrong")
    assert response.status_code == 429
    response = log_in(client, account, PASSWORD)
    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()
    assert not logged_in(client)


def test_fifty_wrong_passwords_then_the_right_one_does_not_log_in(client, account):
    for _ in range(50):
        log_in(client, account, "wrong")
    log_in(client, account, PASSWORD)
    assert not logged_in(client)


def test_the_lockout_is_per_account_and_address(client, account, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, account, "wrong")
    # The same account from another address, and another account from this one, still log in.
    log_in(client, account, PASSWORD, address="10.0.0.2")
    assert logged_in(client)
    client.logout()
    log_in(client, make_user(password=PASSWORD), PASSWORD)
    assert logged_in(client)


def test_a_success_clears_the_count(client, account, settings):
    for _ in range(2):
        for _ in range(settings.AXES_FAILURE_LIMIT - 1):
            log_in(client, account, "wrong")
        log_in(client, account, PASSWORD)
        assert logged_in(client)
        client.logout()


def test_the_lockout_ends_after_the_cool_off(client, account, settings):
    settings.AXES_COOLOFF_TIME = timedelta(seconds=-1)  # already over
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(client, account, "wrong")
    log_in(client, account, PASSWORD)
    assert logged_in(client)
