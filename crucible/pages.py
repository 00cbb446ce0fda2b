"""What a run's page shows of a Crucible run: the job that made it, with its bank, variant, model and prompt."""

from typing import Any

from assessor.models import Run
from crucible.models import CrucibleRun
from crucible.prompts import EXTRACT


def run_panel_context(run: Run) -> dict[str, Any] | None:
    crucible = CrucibleRun.objects.select_related("job", "job__created_by", "made_from").filter(run=run).first()
    if crucible is None:
        return None
    version = crucible.job.prompt_versions.get(EXTRACT.name)
    return {"crucible": crucible, "job": crucible.job, "prompt": f"{EXTRACT.name} v{version}"}
