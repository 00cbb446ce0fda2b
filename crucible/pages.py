"""What a run's page shows of a Crucible run: the job that made it, with its bank, variant, model and prompt."""

from typing import Any

from assessor.models import Run
from assessor.sources import source_owner
from crucible.models import CrucibleRun
from crucible.prompts import EXTRACT
from nuggets.banks import bank_sets


def bank_maker(name: str) -> str:
    """Who or what made a bank, in words: a query-only bank says it is its job's."""
    first = bank_sets(name, counted=False).select_related("source", "source__job", "source__imported_from").first()
    if first is None:
        return "no longer stored"
    source = first.source
    owner = source_owner(source)
    return f"{owner} ({source.job.kind_label})" if source.job is not None else owner


def run_panel_context(run: Run) -> dict[str, Any] | None:
    crucible = CrucibleRun.objects.select_related("job", "job__created_by", "made_from").filter(run=run).first()
    if crucible is None:
        return None
    version = crucible.job.prompt_versions.get(EXTRACT.name)
    return {
        "crucible": crucible,
        "job": crucible.job,
        "prompt": f"{EXTRACT.name} v{version}",
        "bank_maker": bank_maker(crucible.bank),
    }
