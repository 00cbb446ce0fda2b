"""The header: the campaign the page is in with a switcher to the others, and the organizer's destinations, as
the apps registered them (assessor.registry.NavLink), those of the families the campaign uses.

The home page lists the destinations with what each is for; every page's header links them.
"""

from dataclasses import dataclass, field

from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from assessor.collection.pages import url_if_exists
from assessor.models import Campaign
from assessor.registry import FamilyUser, registry
from assessor.site.campaigns import CampaignChoice, campaign_choices, campaign_current
from assessor.work.queue import site_root_urls
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


def organizer_links(campaign: FamilyUser | None = None) -> list[Destination]:
    """The destinations of `campaign`'s families (None: of every family) whose pages exist (an app may register a
    link to a page another app serves)."""
    links = [
        Destination(link.title, link.text, url_if_exists(link.url_name) or "", link.group)
        for link in registry.used_in(campaign, registry.nav_links)
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


@dataclass(frozen=True)
class Header:
    campaign: Campaign | None  # the campaign the page is in, if any
    choices: list[CampaignChoice] = field(default_factory=list)  # the switcher's campaigns
    entries: list[MenuEntry] = field(default_factory=list)
    all_campaigns_url: str = ""  # the home page outside any campaign, which lists them


def organizer_header(request: HttpRequest) -> Header:
    """An organizer's or admin's header: the current campaign, the campaigns they see, and the destinations of the
    current campaign's families."""
    current = campaign_current(request)
    with site_root_urls():
        home = reverse("home")
    return Header(
        campaign=current,
        choices=campaign_choices(request, current),
        entries=menu_entries(organizer_links(current)),
        all_campaigns_url=home,
    )


def nav_context(request: HttpRequest) -> dict:
    """The header: an organizer's or admin's campaigns and destinations, read when a page shows its header (not by
    the fragments htmx swaps); an assessor has their queue and the campaign of the page they are on."""
    user = getattr(request, "user", None)
    if user is None or user_role(user) not in (Role.ORGANIZER, Role.ADMIN):
        return {"header": Header(campaign=getattr(request, "campaign", None))}
    return {"header": SimpleLazyObject(lambda: organizer_header(request))}
