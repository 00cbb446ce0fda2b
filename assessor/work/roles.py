"""The three roles: assessor, organizer, admin, as Django groups.

One place decides what a user is; views ask through `role_required`.
"""

from collections.abc import Callable
from enum import StrEnum
from functools import wraps
from pathlib import Path
from typing import cast

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AnonymousUser, Group, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from assessor.models import CampaignMember
from assessor.models.scope import CampaignRequired, campaign_in_effect
from assessor.work.prepared import Prepared


class Role(StrEnum):
    ASSESSOR = "assessor"
    ORGANIZER = "organizer"
    ADMIN = "admin"


# The user's role, kept on the user object for the rest of the request.
ROLE_CACHE = "_assessor_role"

# A higher role may do what a lower one may, except assessing: assessors'
# pages are theirs alone, so that a topic's human work is one person's.
ROLE_RANK = {Role.ASSESSOR: 0, Role.ORGANIZER: 1, Role.ADMIN: 2}


# Every request of a signed-in person asks (a label save too): written by the ORM once, not on each.
_GROUP_NAMES = Prepared(lambda user_id: Group.objects.filter(user__id=user_id).values_list("name"), int)


def user_role(user: User | AnonymousUser) -> Role | None:
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    cached = getattr(user, ROLE_CACHE, False)
    if cached is not False:
        return cast(Role | None, cached)
    return role_remember(user, {row[0] for row in _GROUP_NAMES.rows(user.pk)})


def role_remember(user: User, group_names: set[str]) -> Role | None:
    """The role of a user in these groups (the highest), kept on the user for the rest of the request."""
    role = next((r for r in (Role.ADMIN, Role.ORGANIZER, Role.ASSESSOR) if r.value in group_names), None)
    setattr(user, ROLE_CACHE, role)
    return role


def user_has_role(user: User | AnonymousUser, *roles: Role) -> bool:
    return user_role(user) in roles


def is_staff_role(user: User | AnonymousUser) -> bool:
    """Organizers and admins: the people who see everything and see LLM output."""
    return user_has_role(user, Role.ORGANIZER, Role.ADMIN)


def role_required(*roles: Role) -> Callable:
    """A page for these roles. An organizer's page is a campaign's (`campaign_page` on the view): the campaigns'
    middleware serves it inside the campaign its URL names, or the only one (assessor.campaigns.middleware); an
    assessor's page is theirs across their campaigns."""

    def decorator(view: Callable) -> Callable:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not user_has_role(request.user, *roles):
                raise PermissionDenied("This page is not for your role.")
            return view(request, *args, **kwargs)

        wrapped.campaign_page = Role.ASSESSOR not in roles  # type: ignore[attr-defined]
        return wrapped

    return decorator


organizer_required = role_required(Role.ORGANIZER, Role.ADMIN)
assessor_required = role_required(Role.ASSESSOR)


def user_set_role(user: User, role: Role) -> None:
    """Give `user` the role, and make them a member of the campaign in effect (the page's or the command's, or the
    only one); with several campaigns and none in effect, campaigns take them in one by one (`campaign members`)."""
    user.groups.set([Group.objects.get(name=role.value)])
    user.is_staff = role in (Role.ORGANIZER, Role.ADMIN)
    user.save(update_fields=["is_staff"])
    setattr(user, ROLE_CACHE, role)
    try:
        CampaignMember.objects.get_or_create(campaign=campaign_in_effect(), user=user)
    except CampaignRequired:
        pass


def role_context(request: HttpRequest) -> dict:
    role = user_role(request.user) if hasattr(request, "user") else None
    return {"role": role.value if role else None}


def project_apps() -> list[str]:
    """The labels of the installed apps that are part of this project (not Django's or a library's)."""
    from django.apps import apps
    from django.conf import settings

    base = Path(settings.BASE_DIR).resolve()
    return [
        config.label
        for config in apps.get_app_configs()
        if Path(config.path).resolve().is_relative_to(base) and "site-packages" not in Path(config.path).parts
    ]


def roles_ensure(**_kwargs) -> None:
    """Create the role groups and their permissions (run after every migrate)."""
    from django.contrib.auth.models import Permission

    project_perms = Permission.objects.filter(content_type__app_label__in=project_apps())
    admin, _ = Group.objects.get_or_create(name=Role.ADMIN.value)
    admin.permissions.set(Permission.objects.all())
    organizer, _ = Group.objects.get_or_create(name=Role.ORGANIZER.value)
    organizer.permissions.set(project_perms.exclude(codename__startswith="delete_"))
    Group.objects.get_or_create(name=Role.ASSESSOR.value)
