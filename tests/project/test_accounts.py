"""Organizers manage accounts on their page and with `create_assessor`; every change is audited."""

import re
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from assessor.models import AuditEntry
from assessor.work.roles import Role, user_role
from tests.builders import make_user

pytestmark = pytest.mark.django_db

URL = "/accounts/"


@pytest.fixture
def boss(client):
    """The client logged in as the organizer `boss`."""
    user = make_user(Role.ORGANIZER, username="boss")
    client.force_login(user)
    return user


def logs_in(username: str, password: str) -> bool:
    """A login on the login page (through the login throttle), which redirects only when it succeeds."""
    response = Client().post(reverse("login"), {"username": username, "password": password})
    return response.status_code == 302


def audit_rows() -> list[tuple[str, str, str]]:
    return list(AuditEntry.objects.order_by("id").values_list("actor_name", "action", "target"))


def test_the_accounts_page_is_for_organizers(client):
    assert reverse("accounts:list") == URL
    client.force_login(make_user(Role.ASSESSOR))
    assert client.get(URL).status_code == 403
    client.force_login(make_user(Role.ORGANIZER))
    assert client.get(URL).status_code == 200


def test_the_page_lists_every_user_with_role_and_state(client, boss):
    make_user(Role.ASSESSOR, username="alice")
    gone = make_user(Role.ASSESSOR, username="bob")
    gone.is_active = False
    gone.save()
    text = client.get(URL).content.decode()
    rows = re.findall(r'<tr data-user="(\w+)">.*?<td>(\w+)</td>\s*<td>.*?>(active|deactivated)<', text, re.S)
    assert rows == [
        ("alice", "assessor", "active"),
        ("bob", "assessor", "deactivated"),
        ("boss", "organizer", "active"),
    ]


def test_an_organizer_adds_an_assessor_who_can_then_log_in(client, boss):
    response = client.post(URL, {"username": "carol", "password": "a-long-password"}, follow=True)
    assert "Assessor carol added." in response.content.decode()
    carol = User.objects.get(username="carol")
    assert user_role(carol) == Role.ASSESSOR and carol.is_active and not carol.is_staff
    assert logs_in("carol", "a-long-password")
    assert audit_rows() == [("boss", "account_create", "carol")]


def test_an_empty_password_is_made_and_shown_once(client, boss):
    response = client.post(URL, {"username": "dave", "password": ""}, follow=True)
    shown = re.search(r"Its password is (\w+) \(shown once", response.content.decode())
    assert shown and len(shown.group(1)) == 14
    assert logs_in("dave", shown.group(1))
    assert shown.group(1) not in client.get(URL).content.decode()


def test_a_taken_name_or_a_short_password_is_refused_and_nothing_is_recorded(client, boss):
    make_user(Role.ASSESSOR, username="erin")
    taken = client.post(URL, {"username": "Erin", "password": "a-long-password"})
    assert taken.status_code == 400
    assert "The user name &#x27;Erin&#x27; is taken." in taken.content.decode()
    short = client.post(URL, {"username": "frank", "password": "short"})
    assert short.status_code == 400
    assert "This password is too short." in short.content.decode()
    assert not User.objects.filter(username="frank").exists()
    assert audit_rows() == []


def test_a_password_reset_changes_the_password_and_is_audited(client, boss):
    alice = make_user(Role.ASSESSOR, username="alice", password="the-old-password")
    client.post(reverse("accounts:password", args=[alice.pk]), {"password": "the-new-password"})
    assert not logs_in("alice", "the-old-password")
    assert logs_in("alice", "the-new-password")
    assert audit_rows() == [("boss", "password_reset", "alice")]


def test_deactivating_stops_logins_and_reactivating_restores_them(client, boss):
    alice = make_user(Role.ASSESSOR, username="alice", password="alice-password")
    client.post(reverse("accounts:active", args=[alice.pk]), {"active": "0"})
    assert not logs_in("alice", "alice-password")
    client.post(reverse("accounts:active", args=[alice.pk]), {"active": "1"})
    assert logs_in("alice", "alice-password")
    assert audit_rows() == [("boss", "account_deactivate", "alice"), ("boss", "account_reactivate", "alice")]


def test_an_organizer_cannot_lock_out_themselves_or_change_an_admin(client, boss):
    admin = User.objects.create_superuser(username="root", password="root-password")
    response = client.post(reverse("accounts:active", args=[boss.pk]), {"active": "0"}, follow=True)
    assert "You cannot deactivate your own account." in response.content.decode()
    response = client.post(reverse("accounts:password", args=[admin.pk]), {"password": "taken-over-now"}, follow=True)
    assert "root is an admin: only an admin may change that account." in response.content.decode()
    client.post(reverse("accounts:active", args=[admin.pk]), {"active": "0"})
    boss.refresh_from_db()
    admin.refresh_from_db()
    assert boss.is_active and admin.is_active
    assert logs_in("root", "root-password")
    assert audit_rows() == []


def test_create_assessor_with_a_given_password(db):
    out = StringIO()
    call_command("create_assessor", "gina", "--password", "gina-password", stdout=out)
    assert out.getvalue() == "Created assessor gina.\n"
    gina = User.objects.get(username="gina")
    assert user_role(gina) == Role.ASSESSOR
    assert logs_in("gina", "gina-password")
    assert audit_rows() == [("command line", "account_create", "gina")]


def test_create_assessor_makes_and_prints_a_password_and_organizer_makes_an_organizer(db):
    out = StringIO()
    call_command("create_assessor", "hank", "--organizer", stdout=out)
    printed = re.fullmatch(r"Created organizer hank\.\nPassword: (\w{14})\n", out.getvalue())
    assert printed
    hank = User.objects.get(username="hank")
    assert user_role(hank) == Role.ORGANIZER and hank.is_staff
    assert logs_in("hank", printed.group(1))


def test_create_assessor_refuses_a_taken_name(db):
    make_user(Role.ASSESSOR, username="ivy")
    with pytest.raises(CommandError, match="The user name 'ivy' is taken. Nothing was created."):
        call_command("create_assessor", "ivy", "--password", "ivy-password-2")
