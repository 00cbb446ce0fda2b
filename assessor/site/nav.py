"""The organizer's destinations, as the apps registered them (assessor.registry.NavLink).

The home page lists them with what each is for; every page's header links them.
"""

from dataclasses import dataclass

from django.http import HttpRequest

from assessor.collection.pages import url_if_exists
from assessor.registry import registry
from assessor.work.roles import Role, user_role


@dataclass(frozen=True)
class Destination:
    title: str
    text: str
    url: str


def organizer_links() -> list[Destination]:
    """The destinations whose pages exist (an app may register a link to a page another app serves)."""
    links = [Destination(link.title, link.text, url_if_exists(link.url_name) or "") for link in registry.nav_links]
    return [link for link in links if link.url]


def nav_context(request: HttpRequest) -> dict:
    """The header's links: an organizer's or admin's destinations; an assessor has their queue only."""
    user = getattr(request, "user", None)
    if user is None or user_role(user) not in (Role.ORGANIZER, Role.ADMIN):
        return {"nav_links": []}
    return {"nav_links": organizer_links()}
