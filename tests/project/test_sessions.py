"""Who asks (assessor/site/sessions.py): the session and the user read by one query written once, with the same
outcome as Django's own `auth.get_user` in every case it decides: signed in, logged out, expired, password
changed, deactivated, deleted, a role changed, a session signed with a retired secret."""

from datetime import timedelta

import pytest
from django.contrib import auth
from django.db import connection
from django.test import Client, RequestFactory, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from assessor.models import UserSession
from assessor.site.sessions import MODEL_BACKEND, SessionStore, request_user
from assessor.work.roles import ROLE_CACHE, Role, user_role, user_set_role
from tests.builders import make_user

pytestmark = pytest.mark.django_db

PASSWORD = "a-password-for-tests"


def signed_in(user, *, backend: str = MODEL_BACKEND) -> Client:
    client = Client()
    client.force_login(user, backend=backend)
    return client


def request_of(client: Client):
    """A request carrying the client's session, as SessionMiddleware hands it on."""
    request = RequestFactory().get("/")
    request.session = SessionStore(client.cookies["sessionid"].value)
    return request


def both_users(client: Client):
    """(this module's user, Django's user) for the client's session, each on a request of its own."""
    return request_user(request_of(client)), auth.get_user(request_of(client))


def test_a_login_through_the_form_is_signed_in_by_model_backend():
    """The case the quick path takes: what the login page stores (axes only refuses, it signs nobody in)."""
    make_user(Role.ASSESSOR, username="ann", password=PASSWORD)
    client = Client()
    assert client.post(reverse("login"), {"username": "ann", "password": PASSWORD}).status_code == 302
    assert client.session[auth.BACKEND_SESSION_KEY] == MODEL_BACKEND


def test_the_session_the_signed_in_user_and_role_come_in_one_query():
    user = make_user(Role.ORGANIZER)
    client = signed_in(user)
    with CaptureQueriesContext(connection) as queries:
        found, django_user = request_user(request_of(client)), None
        assert found.pk == user.pk and found.username == user.username
        assert user_role(found) == Role.ORGANIZER  # remembered: no query of its own
    assert len(queries) == 1, [q["sql"] for q in queries.captured_queries]
    django_user = auth.get_user(request_of(client))
    assert django_user.pk == found.pk
    assert [getattr(found, f.attname) for f in user._meta.concrete_fields] == [
        getattr(django_user, f.attname) for f in user._meta.concrete_fields
    ]


def test_a_user_in_no_group_has_no_role_and_a_superuser_is_admin():
    plain = make_user(Role.ASSESSOR)
    plain.groups.clear()
    assert getattr(request_user(request_of(signed_in(plain))), ROLE_CACHE) is None
    boss = make_user(Role.ASSESSOR)
    boss.is_superuser = True
    boss.save()
    assert user_role(request_user(request_of(signed_in(boss)))) == Role.ADMIN


def test_a_role_changed_counts_on_the_next_request():
    user = make_user(Role.ASSESSOR)
    client = signed_in(user)
    assert user_role(request_user(request_of(client))) == Role.ASSESSOR
    user_set_role(user, Role.ORGANIZER)
    assert user_role(request_user(request_of(client))) == Role.ORGANIZER


def test_a_logged_out_session_is_nobody():
    client = signed_in(make_user())
    key = client.cookies["sessionid"].value
    client.post(reverse("logout"))
    assert not UserSession.objects.filter(session_key=key).exists()
    stale = Client()
    stale.cookies["sessionid"] = key
    ours, django = both_users(stale)
    assert not ours.is_authenticated and not django.is_authenticated
    assert stale.get(reverse("home")).status_code == 302  # to the login page


def test_an_expired_session_is_nobody():
    client = signed_in(make_user())
    UserSession.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    store = SessionStore(client.cookies["sessionid"].value)
    assert store.load() == {} and store.session_key is None  # as Django's store: the key dropped
    ours, django = both_users(client)
    assert not ours.is_authenticated and not django.is_authenticated


def test_a_password_changed_elsewhere_ends_the_session():
    user = make_user()
    client = signed_in(user)
    user.set_password("another-password-entirely")
    user.save()
    request = request_of(client)
    assert not request_user(request).is_authenticated
    assert request.session.is_empty()  # flushed, as Django's get_user flushes it
    assert not auth.get_user(request_of(signed_in(user))).is_anonymous  # a new login works


def test_a_deactivated_or_deleted_user_is_nobody():
    user = make_user()
    client = signed_in(user)
    user.is_active = False
    user.save()
    ours, django = both_users(client)
    assert not ours.is_authenticated and not django.is_authenticated
    other = make_user()
    client = signed_in(other)
    other.delete()
    ours, django = both_users(client)
    assert not ours.is_authenticated and not django.is_authenticated


def test_a_session_signed_with_a_retired_secret_is_kept_under_the_new_one():
    with override_settings(SECRET_KEY="the-old-secret-" * 4):
        user = make_user()
        client = signed_in(user)
        old_key = client.cookies["sessionid"].value
    with override_settings(SECRET_KEY="the-new-secret-" * 4, SECRET_KEY_FALLBACKS=["the-old-secret-" * 4]):
        request = request_of(client)
        found = request_user(request)
        assert found.pk == user.pk
        assert request.session.session_key != old_key  # cycled, as Django does
        assert request.session[auth.HASH_SESSION_KEY] == user.get_session_auth_hash()
    with override_settings(SECRET_KEY="the-new-secret-" * 4):  # no fallback: the old hash is refused
        assert not request_user(request_of(client)).is_authenticated


@override_settings(AUTHENTICATION_BACKENDS=[MODEL_BACKEND, "django.contrib.auth.backends.AllowAllUsersModelBackend"])
def test_another_backend_goes_through_djangos_own_code():
    """A backend of other rules (this one lets a deactivated user in) is asked, as Django asks it."""
    user = make_user(Role.ASSESSOR)
    client = signed_in(user, backend="django.contrib.auth.backends.AllowAllUsersModelBackend")
    user.is_active = False
    user.save()
    ours, django = both_users(client)
    assert ours.pk == django.pk == user.pk


def test_the_session_row_keeps_the_id_of_the_user_signed_in_to_it():
    user = make_user(Role.ASSESSOR, username="ann", password=PASSWORD)
    client = Client()
    client.get(reverse("login"))
    assert client.post(reverse("login"), {"username": "ann", "password": PASSWORD}).status_code == 302
    assert UserSession.objects.get(pk=client.cookies["sessionid"].value).user_id == user.pk
    anonymous = SessionStore()
    anonymous["seen"] = True
    anonymous.save()
    assert UserSession.objects.get(pk=anonymous.session_key).user_id is None


def test_a_row_naming_no_user_or_another_one_is_read_apart_for_the_user_the_data_names():
    """The data decides who is signed in: the user's id beside it only saves a query when it agrees."""
    user, other = make_user(Role.ORGANIZER), make_user(Role.ASSESSOR)
    client = signed_in(user)
    key = client.cookies["sessionid"].value
    for column in (None, other.pk):
        UserSession.objects.filter(pk=key).update(user_id=column)
        with CaptureQueriesContext(connection) as queries:
            found = request_user(request_of(client))
            assert found.pk == user.pk and user_role(found) == Role.ORGANIZER
        assert len(queries) == 2  # the session's row, then the user apart


# Not serialized_rollback: after an earlier transactional test's flush, whose post_migrate makes the roles' groups
# again, the serialized groups met them by name and the test failed to start. Nothing the migrations made is needed
# back: a flushed database makes its first campaign when it is first asked for (campaign_first).
@pytest.mark.django_db(transaction=True)
def test_sessions_from_before_the_user_column_are_kept_with_their_user():
    """Nobody is signed out by the change of table: the sessions that have not expired are copied with their
    user's id, read from their data as Django's store decodes it."""
    from django.contrib.sessions.backends.db import SessionStore as DjangoSessionStore
    from django.contrib.sessions.models import Session
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("assessor", "0028_job_items_claimed_in_order")], [("assessor", "0029_user_session")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    try:
        user = make_user(Role.ASSESSOR)
        signed = DjangoSessionStore()
        signed.update({auth.SESSION_KEY: str(user.pk), auth.BACKEND_SESSION_KEY: MODEL_BACKEND,
                       auth.HASH_SESSION_KEY: user.get_session_auth_hash()})  # fmt: skip
        signed.create()
        expired = DjangoSessionStore()
        expired.update({auth.SESSION_KEY: str(user.pk)})
        expired.create()
        Session.objects.filter(pk=expired.session_key).update(expire_date=timezone.now() - timedelta(seconds=1))
        unreadable = Session.objects.create(
            session_key="x" * 32, session_data="not-signed", expire_date=timezone.now() + timedelta(days=1)
        )
        executor = MigrationExecutor(connection)
        executor.migrate(after)
        copied = {row.pk: row.user_id for row in UserSession.objects.all()}
        assert copied == {signed.session_key: user.pk, unreadable.pk: None}
        client = Client()
        client.cookies["sessionid"] = signed.session_key
        assert request_user(request_of(client)).pk == user.pk
    finally:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())


def test_a_session_row_decodes_as_the_site_stores_it():
    user = make_user()
    client = signed_in(user)
    row = UserSession.objects.get(pk=client.cookies["sessionid"].value)
    assert row.get_decoded()[auth.SESSION_KEY] == str(user.pk)
