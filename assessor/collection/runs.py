"""Matching run ids across files.

The rule: an incoming run id matches a stored one when they are equal, when it
is an alias of it (the id of a run joined into it, `RunAlias`), or when one is
the other with a team prefix in front, ending in a dot
(`citi.BEST_cot_gpt3.5` ~ `BEST_cot_gpt3.5`); the prefix rule applies to
aliases too. An exact id wins, then an exact alias; otherwise candidates naming
more than one run are an ambiguity, and an error.

Ids and aliases are matched among one campaign's runs (the campaign in effect):
a run "baseline" of each of two campaigns is two runs, and an alias of one
campaign never lands a file on another's run.
"""

from collections.abc import Iterable, Mapping

from django.db.models import QuerySet

from assessor.importing.staging import Writes, provisional
from assessor.models import Campaign, Run, RunAlias
from assessor.models.scope import campaign_in_effect


class AmbiguousRun(LookupError):
    pass


def run_ids_match(a: str, b: str) -> bool:
    return a == b or a.endswith("." + b) or b.endswith("." + a)


def campaign_runs(campaign: Campaign | None = None) -> QuerySet[Run]:
    """The runs of `campaign` (default: the one in effect; several campaigns and none named: CampaignRequired)."""
    return Run.objects.unscoped().filter(campaign=campaign or campaign_in_effect())


def run_aliases(campaign: Campaign | None = None) -> dict[str, str]:
    """Every alias of the campaign (default: the one in effect) with the id of the run it names (aliases number
    like runs: hundreds at most)."""
    campaign = campaign or campaign_in_effect()
    return dict(RunAlias.objects.unscoped().filter(campaign=campaign).values_list("alias", "run__run_id"))


def run_match(run_id: str, stored_ids: Iterable[str], aliases: Mapping[str, str] | None = None) -> str | None:
    """The stored id that `run_id` names, or None; raises AmbiguousRun for several.

    `aliases` maps other ids to stored ones (`run_aliases()`); without it only ids match.
    """
    stored_ids = set(stored_ids)
    aliases = aliases or {}
    if run_id in stored_ids:
        return run_id
    # An alias is checked before the prefix rule: it is an id the run had, as exact as its own.
    if run_id in aliases and aliases[run_id] in stored_ids:
        return aliases[run_id]
    candidates = {stored for stored in stored_ids if run_ids_match(run_id, stored)}
    candidates |= {stored for alias, stored in aliases.items() if stored in stored_ids and run_ids_match(run_id, alias)}
    if len(candidates) > 1:
        raise AmbiguousRun(f"run id {run_id!r} matches several stored runs: {', '.join(sorted(candidates))}")
    return candidates.pop() if candidates else None


def published_remember(run: Run, seen_id: str, writes: Writes | None = None) -> None:
    """Keep the team-prefixed form of a run's id when a file names it so (the first one seen)."""
    if run.published_id:
        return
    if seen_id != run.run_id and seen_id.endswith("." + run.run_id):
        published = seen_id
    elif "." in run.run_id and run.run_id.endswith("." + seen_id):
        published = run.run_id
    else:
        return
    run.published_id = published
    if writes is None:
        Run.objects.filter(pk=run.pk, published_id="").update(published_id=published)
    elif provisional(run.pk):
        writes.update([run], ["published_id"])  # a run this import makes
    else:
        pk = run.pk
        writes.later(lambda: Run.objects.filter(pk=pk, published_id="").update(published_id=published))


class RunResolver:
    """Resolves the run ids of one import against the campaign's stored runs, creating missing ones on request.

    Loads the run ids once (runs number in the hundreds), so resolving a file's
    lines costs no query per line.
    """

    def __init__(self, writes: Writes | None = None, campaign: Campaign | None = None) -> None:
        """`writes`: an import's, through which new runs and published ids are written (else at once);
        `campaign`: whose runs are matched and made (default: the campaign in effect)."""
        self.writes = writes
        self.campaign = campaign or campaign_in_effect()
        self.runs: dict[str, Run] = {run.run_id: run for run in campaign_runs(self.campaign)}
        self.aliases = run_aliases(self.campaign)
        self._cache: dict[str, Run | None] = {}

    def find(self, run_id: str) -> Run | None:
        if run_id not in self._cache:
            stored = run_match(run_id, self.runs, self.aliases)
            run = self.runs[stored] if stored else None
            if run is not None:
                published_remember(run, run_id, self.writes)
            self._cache[run_id] = run
        return self._cache[run_id]

    def get_or_create(self, run_id: str, **create_fields) -> tuple[Run, bool]:
        run = self.find(run_id)
        if run is not None:
            return run, False
        if self.writes is None:
            run = Run.objects.create(run_id=run_id, campaign=self.campaign, **create_fields)
        else:
            run = self.writes.create_one(Run(run_id=run_id, campaign=self.campaign, **create_fields))
        self.runs[run_id] = run
        # A new run can change how other ids resolve (it may make one ambiguous).
        self._cache.clear()
        return run, True
