"""Who asks, read cheaply on every request: the session row and the user with their role, in one query.

Every request of a signed-in person reads their session and their user, and
every assessor's page asks for their role: with Django's own code that is
three queries, each built and compiled by the ORM on the spot, which cost a
label save more CPU than its own writes. Here the session's row
(`assessor.models.UserSession`, which keeps the signed-in user's id beside the
encoded data) is read with its user and the user's groups' names by one query
written once (`assessor.work.prepared`), so that the role check asks nothing
more.

What is read and what is checked is Django's: the session must exist and not
be expired (`SessionStore`, the database engine's store, SESSION_ENGINE), and
the user must be active and the session's hash must match the user's
password (`request_user`, Django's `auth.get_user` with the user read
another way); the user read with the row is taken only if it is the one the
session's data names, and otherwise read apart. A session signed in by another
backend goes through Django's own code. Nothing is kept between requests: a
logout, a password change or a new role takes effect on the next request, in
every process.
"""

from typing import Any, cast

from django.conf import settings
from django.contrib import auth
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore
from django.http import HttpRequest
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject

from assessor.models.sessions import UserSession
from assessor.work.prepared import Prepared, instance_from_row
from assessor.work.roles import role_remember

MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"

_USER_FIELDS = [field.attname for field in User._meta.concrete_fields]
# One row per group of the user (one with no group name if they have none); the user's columns are empty when the
# row names no user.
_SESSION_WITH_USER = Prepared(
    lambda session_key: (
        UserSession.objects.filter(pk=session_key)
        .order_by()
        .values_list(
            "session_data", "expire_date", "user_id", *[f"user__{name}" for name in _USER_FIELDS], "user__groups__name"
        )
    ),
    str,
)
_USER_WITH_GROUPS = Prepared(
    lambda user_id: User.objects.filter(pk=user_id).order_by().values_list(*_USER_FIELDS, "groups__name"), int
)


class SessionStore(DatabaseSessionStore):
    """Django's database session store on `UserSession`: the row read with its user by one query written once
    (SESSION_ENGINE names this module), and the user's id written beside the data each time it is saved."""

    # The user the row names, with their role, as read with it: None when it names none.
    user_read: User | None = None

    @classmethod
    def get_model_class(cls) -> type[UserSession]:
        return UserSession

    def create_model_instance(self, data: dict[str, Any]) -> UserSession:
        session = cast(UserSession, super().create_model_instance(data))
        session.user_id = signed_in_user_id(data)
        return session

    def _get_session_from_db(self) -> UserSession | None:
        key = self.session_key or ""
        rows = _SESSION_WITH_USER.rows(key) if key else []
        # As Django's store: only a session that has not expired (by this machine's clock); an unknown or expired
        # key is dropped, and a new one is made if the session is saved.
        if not rows or rows[0][1] <= timezone.now():
            self._session_key = None
            return None
        data, expire_date, user_id = rows[0][:3]
        self.user_read = _user_with_role(rows, first=3)
        return UserSession(session_key=key, session_data=data, expire_date=expire_date, user_id=user_id)


def signed_in_user_id(data: dict[str, Any]) -> int | None:
    """The id of the user a session's data says is signed in, if it is one of this site's user ids."""
    try:
        return int(data[auth.SESSION_KEY])
    except (KeyError, TypeError, ValueError):
        return None


def _user_with_role(rows: list[list[Any]], *, first: int) -> User | None:
    """The user in the columns from `first` on of `rows` (one per group, the group's name last), their role
    remembered on them (`assessor.work.roles.user_role` asks no more); None when the columns are empty."""
    if rows[0][first] is None:
        return None
    user = instance_from_row(User, _USER_FIELDS, rows[0][first:-1])
    role_remember(user, {row[-1] for row in rows if row[-1] is not None})
    return user


def user_with_role(user_id: int) -> User | None:
    """The user `user_id` with their role, read apart from the session; None if there is no such user."""
    rows = _USER_WITH_GROUPS.rows(user_id)
    return _user_with_role(rows, first=0) if rows else None


def session_user(request: HttpRequest, user_id: int) -> User | None:
    """The user `user_id`: as read with the session's row when it is the one the row names (no query), else read
    apart (a row written before its user's id was kept beside the data)."""
    read = getattr(request.session, "user_read", None)
    if read is not None and read.pk == user_id:
        return read
    return user_with_role(user_id)


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
    user = session_user(request, user_id)
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
