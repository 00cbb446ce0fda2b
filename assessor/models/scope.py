"""The campaign a request, a command or a job works in, and the managers that keep to it.

A web request enters the campaign its URL names (`assessor.campaigns.middleware`),
a command the one `--campaign` names (`assessor.campaigns.commands`), a job's
items their job's (`assessor.jobs.engine`). Inside, every campaign-owned
model's default manager (`CampaignScopedManager`) reads that campaign's rows
only, so a page, a leaderboard or an export of one campaign cannot see another's;
rows made inside it belong to it (`campaign_default`, the models' default).

Outside any scope (the shell, a migration, a test that never names one) the
managers read every campaign, and new rows go to the only campaign there is: a
database with several campaigns refuses to guess (`CampaignRequired`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, TypeVar

from django.db import models

if TYPE_CHECKING:
    from assessor.models.campaigns import Campaign

FIRST_SLUG = "main"
FIRST_TITLE = "Main campaign"
# The first campaign's rules are TREC 2024 RAG's, which the app kept before campaigns had rules of their own.
FIRST_RULES = {"answer_word_limit": 400, "answer_reference_cap": 20}

_scope: ContextVar[Campaign | None] = ContextVar("campaign_scope", default=None)


class CampaignRequired(LookupError):
    """Several campaigns exist and nothing said which one is meant."""


@contextmanager
def campaign_scope(campaign: Campaign | None) -> Iterator[Campaign | None]:
    """Work inside `campaign` (None: outside any, as before the scope) until the block ends."""
    token = _scope.set(campaign)
    try:
        yield campaign
    finally:
        _scope.reset(token)


def scope_enter(campaign: Campaign) -> Token[Campaign | None]:
    """Enter `campaign` until `scope_leave(token)`: for a scope opened and closed in two hooks (a middleware's)."""
    return _scope.set(campaign)


def scope_leave(token: Token[Campaign | None]) -> None:
    _scope.reset(token)


def scoped_campaign() -> Campaign | None:
    """The campaign of the scope in effect, if any."""
    return _scope.get()


def campaign_in_effect() -> Campaign:
    """The scope's campaign; outside a scope the only one (an empty database gets its first)."""
    campaign = _scope.get()
    if campaign is not None:
        return campaign
    from assessor.models.campaigns import Campaign

    found = list(Campaign.objects.order_by("pk")[:2])
    if len(found) == 1:
        return found[0]
    if not found:
        return campaign_first()
    raise CampaignRequired("There are several campaigns: name one (--campaign SLUG).")


def campaign_first() -> Campaign:
    """The campaign a database without any starts with (a flushed test database too)."""
    from assessor.models.campaigns import Campaign

    campaign, _ = Campaign.objects.get_or_create(
        slug=FIRST_SLUG, defaults={"title": FIRST_TITLE, "key_suffix": "", **FIRST_RULES}
    )
    return campaign


def campaign_default() -> int:
    """The `campaign` of a row made without one: the campaign in effect."""
    return campaign_in_effect().pk


M = TypeVar("M", bound=models.Model)


class CampaignScopedManager(models.Manager[M]):
    """A default manager that, inside a campaign's scope, reads that campaign's rows only.

    `path` is the lookup from the model to its campaign's id: "campaign" for a
    model that has the column, "topic__campaign" for one owned through its topic.
    Related managers and foreign keys read through the base manager, unfiltered:
    a row already reached is never hidden.
    """

    def __init__(self, path: str = "campaign") -> None:
        super().__init__()
        self.campaign_path = path

    def get_queryset(self) -> models.QuerySet[M]:
        queryset = super().get_queryset()
        campaign = _scope.get()
        # A related manager (`topic.work`) is made of this class, without its path: the rows of an instance already
        # reached are its own, and are not filtered again.
        if campaign is None or getattr(self, "instance", None) is not None:
            return queryset
        return queryset.filter(**{f"{self.campaign_path}_id": campaign.pk})

    def unscoped(self) -> models.QuerySet[M]:
        """Every campaign's rows, whatever the scope (the site's administrators, the campaigns' own pages)."""
        return super().get_queryset()


def campaign_of_row(model: type[models.Model], pk: int) -> Campaign:
    """The campaign of the campaign-owned row `pk` of `model` (a job, an upload), whatever the scope."""
    from assessor.models.campaigns import Campaign

    owner = model._base_manager.filter(pk=pk).values("campaign_id")
    return Campaign.objects.get(pk=models.Subquery(owner))
