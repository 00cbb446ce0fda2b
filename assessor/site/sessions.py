"""Who asks, read cheaply on every request: the session row, then the user with their role, in two queries.

Every request of a signed-in person reads their session and their user, and
every assessor's page asks for their role: with Django's own code that is
three queries, each built and compiled by the ORM on the spot, which cost a
label save more CPU than its own writes. Here the same rows are read by
queries written once (`assessor.work.prepared`), and the user comes with their
groups' names in the same query, so that the role check asks nothing more.

What is read and what is checked is Django's: the session must exist and not
be expired (`SessionStore`, the database engine's store, SESSION_ENGINE), and
the user must be active and the session's hash must match the user's
password (`request_user`, Django's `auth.get_user` with the user read
another way); a session signed in by another backend goes through Django's
own code. Nothing is kept between requests: a logout, a password change or a
new role takes effect on the next request, in every process.
"""

from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.http import HttpRequest
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject

from assessor.work.prepared import Prepared, instance_from_row, statement_cursor
from assessor.work.roles import role_remember

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


class SessionStore(DatabaseSessionStore):
    """Django's database session store, its row read by one query written once (SESSION_ENGINE names this module)."""

    def _get_session_from_db(self) -> Session | None:
        key = self.session_key or ""
        data = session_data(key)
        if data is None:
            # As Django's store: an unknown or expired key is dropped, and a new one is made if the session is saved.
            self._session_key = None
            return None
        return Session(session_key=key, session_data=data)


_SESSION_FIELDS = {field.name: field for field in Session._meta.concrete_fields}


def session_data(session_key: str) -> str | None:
    """The encoded data of the session `session_key` if it has not expired (by this machine's clock, as Django)."""
    quote = connection.ops.quote_name
    expire = _SESSION_FIELDS["expire_date"]
    sql = (
        f"SELECT {quote(_SESSION_FIELDS['session_data'].column)} FROM {quote(Session._meta.db_table)} "
        f"WHERE {quote(_SESSION_FIELDS['session_key'].column)} = %s AND {quote(expire.column)} > %s"
    )
    with statement_cursor() as cursor:
        cursor.execute(sql, [session_key, expire.get_db_prep_value(timezone.now(), connection)])
        row = cursor.fetchone()
    return row[0] if row else None


_USER_FIELDS = [field.attname for field in User._meta.concrete_fields]
# One row per group of the user (one with no group name if they have none).
_USER_WITH_GROUPS = Prepared(
    lambda user_id: User.objects.filter(pk=user_id).order_by().values_list(*_USER_FIELDS, "groups__name"), int
)


def user_with_role(user_id: int) -> User | None:
    """The user `user_id`, their role remembered on them (`assessor.work.roles.user_role` asks no more); None if
    there is no such user."""
    rows = _USER_WITH_GROUPS.rows(user_id)
    if not rows:
        return None
    user = instance_from_row(User, _USER_FIELDS, rows[0][:-1])
    role_remember(user, {row[-1] for row in rows if row[-1] is not None})
    return user


def request_user(request: HttpRequest) -> Any:
    """Django's `auth.get_user(request)`, the user and their role read by `user_with_role` when ModelBackend signed
    them in: the same user, or AnonymousUser (the session flushed) where Django's refuses it."""
    try:
        user_id = auth._get_user_session_key(request)  # type: ignore[attr-defined]
        backend_path = request.session[auth.BACKEND_SESSION_KEY]
    except KeyError:
        return AnonymousUser()
    if backend_path != MODEL_BACKEND or backend_path not in settings.AUTHENTICATION_BACKENDS:
        return auth.get_user(request)
    user = user_with_role(user_id)
    if user is None or not ModelBackend().user_can_authenticate(user):
        return AnonymousUser()
    # From here on as Django's get_user: the session is the user's only while it holds their password's hash.
    session_hash = request.session.get(auth.HASH_SESSION_KEY)
    session_auth_hash = user.get_session_auth_hash()
    if session_hash and constant_time_compare(session_hash, session_auth_hash):
        return user
    if session_hash and any(
        constant_time_compare(session_hash, fallback) for fallback in user.get_session_auth_fallback_hash()
    ):
        request.session.cycle_key()
        request.session[auth.HASH_SESSION_KEY] = session_auth_hash
        return user
    request.session.flush()
    return AnonymousUser()


def _cached_user(request: HttpRequest) -> Any:
    if not hasattr(request, "_cached_user"):
        request._cached_user = request_user(request)  # type: ignore[attr-defined]
    return request._cached_user  # type: ignore[attr-defined]


class UserMiddleware(AuthenticationMiddleware):
    """Django's AuthenticationMiddleware, the user read by `request_user`."""

    def process_request(self, request: HttpRequest) -> None:
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: _cached_user(request))  # type: ignore[assignment]
