"""The session row, with the id of the user signed in to it (assessor/site/sessions.py reads both in one query)."""

from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


class UserSession(AbstractBaseSession):
    """Django's database session (its key, encoded data and expiry) and the user its data says is signed in,
    written from the data each time the session is saved. Every request of a signed-in person reads the session
    and its user: with the user's id beside the data, one statement reads both. The data stays what decides who
    is signed in; the column only saves reading the user apart."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta(AbstractBaseSession.Meta):  # type: ignore[name-defined]  # Django inherits an abstract Meta
        db_table = "assessor_user_session"

    @classmethod
    def get_session_store_class(cls) -> type[SessionStore]:
        # For encoding and decoding the data (`get_decoded`), which the site's store (assessor/site/sessions.py,
        # SESSION_ENGINE) does as Django's database store does, with the same signing salt.
        return SessionStore
