"""The account rules, one place for the page and the `create_assessor` command.

Every change is written to the audit trail (`AuditEntry`) in the transaction
that makes it, so that a change and its record stand or fall together.
"""

import secrets
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from assessor.models import AuditEntry
from assessor.work.roles import ROLE_RANK, Role, user_role, user_set_role

# Long enough to type from a printed note, with no easily confused letters.
PASSWORD_ALPHABET = "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
GENERATED_PASSWORD_LENGTH = 14


class AccountRefused(Exception):
    """A change the rules do not allow; the message says why, for the person who asked."""


@dataclass(frozen=True)
class AccountRow:
    user: User
    role: Role | None


def password_generate() -> str:
    return "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(GENERATED_PASSWORD_LENGTH))


def audit_record(*, actor: User | None, action: str, target: str, detail: str = "") -> AuditEntry:
    return AuditEntry.objects.create(
        actor=actor,
        actor_name=actor.get_username() if actor else "command line",
        action=action,
        target=target,
        detail=detail,
    )


def account_rows() -> list[AccountRow]:
    """Every account with its role, in one query (the groups prefetched)."""
    users = User.objects.order_by("username").prefetch_related("groups")
    rows = []
    for user in users:
        names = {group.name for group in user.groups.all()}
        if user.is_superuser:
            role: Role | None = Role.ADMIN
        else:
            role = next((r for r in (Role.ADMIN, Role.ORGANIZER, Role.ASSESSOR) if r.value in names), None)
        rows.append(AccountRow(user=user, role=role))
    return rows


def _password_check(password: str, user: User | None = None) -> None:
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise AccountRefused(" ".join(error.messages)) from None


def account_create(*, actor: User | None, username: str, password: str, role: Role = Role.ASSESSOR) -> User:
    """A new active account of `role`; a taken or empty name is refused."""
    username = username.strip()
    if not username:
        raise AccountRefused("A user name is needed.")
    if actor is not None and ROLE_RANK[role] > ROLE_RANK[_role_of(actor)]:
        raise AccountRefused(f"Only an admin may create an account of role {role.value}.")
    _password_check(password, User(username=username))
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists():
            raise AccountRefused(f"The user name {username!r} is taken.")
        user = User.objects.create_user(username=username, password=password)
        user_set_role(user, role)
        audit_record(actor=actor, action=AuditEntry.Action.ACCOUNT_CREATE, target=username, detail=f"role {role.value}")
    return user


def _role_of(user: User) -> Role:
    return user_role(user) or Role.ASSESSOR


def _may_change(actor: User, user: User) -> None:
    # An organizer manages assessors and organizers; an admin's account is for admins,
    # so that an organizer cannot take over or lock out the people above them.
    if ROLE_RANK[_role_of(user)] > ROLE_RANK[_role_of(actor)]:
        raise AccountRefused(f"{user.get_username()} is an admin: only an admin may change that account.")


def password_reset(*, actor: User, user: User, password: str) -> None:
    _may_change(actor, user)
    _password_check(password, user)
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        audit_record(actor=actor, action=AuditEntry.Action.PASSWORD_RESET, target=user.get_username())


def active_set(*, actor: User, user: User, active: bool) -> None:
    """Deactivate (the account can no longer log in; its work and labels stay) or reactivate."""
    _may_change(actor, user)
    if not active and user.pk == actor.pk:
        raise AccountRefused("You cannot deactivate your own account.")
    if user.is_active == active:
        return
    action = AuditEntry.Action.ACCOUNT_REACTIVATE if active else AuditEntry.Action.ACCOUNT_DEACTIVATE
    with transaction.atomic():
        user.is_active = active
        user.save(update_fields=["is_active"])
        audit_record(actor=actor, action=action, target=user.get_username())


def audit_entries(limit: int = 50) -> list[AuditEntry]:
    return list(AuditEntry.objects.all()[:limit])
