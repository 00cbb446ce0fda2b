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
    group: str = ""


@dataclass(frozen=True)
class MenuEntry:
    """One entry of the header: a link, or a group of links (`links`) shown where its first link stands."""

    title: str
    links: tuple[Destination, ...]

    @property
    def url(self) -> str:
        return self.links[0].url

    @property
    def is_group(self) -> bool:
        return bool(self.links[0].group)


def organizer_links() -> list[Destination]:
    """The destinations whose pages exist (an app may register a link to a page another app serves)."""
    links = [
        Destination(link.title, link.text, url_if_exists(link.url_name) or "", link.group)
        for link in registry.nav_links
    ]
    return [link for link in links if link.url]


def menu_entries(links: list[Destination]) -> list[MenuEntry]:
    """The header's entries in the links' order, each group gathered at its first link."""
    entries: list[MenuEntry] = []
    groups: dict[str, int] = {}
    for link in links:
        if not link.group:
            entries.append(MenuEntry(link.title, (link,)))
        elif link.group in groups:
            index = groups[link.group]
            entries[index] = MenuEntry(link.group, (*entries[index].links, link))
        else:
            groups[link.group] = len(entries)
            entries.append(MenuEntry(link.group, (link,)))
    return entries


def nav_context(request: HttpRequest) -> dict:
    """The header's links: an organizer's or admin's destinations; an assessor has their queue only."""
    user = getattr(request, "user", None)
    if user is None or user_role(user) not in (Role.ORGANIZER, Role.ADMIN):
        return {"nav_entries": []}
    return {"nav_entries": menu_entries(organizer_links())}
