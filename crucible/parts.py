"""What the crucible app adds to the registry: its job, which writes a run from a question bank, and the
section of that run's page that says so."""

from django.urls import reverse

from assessor.models import Job
from assessor.registry import JobKind, RunPanel, register_fake_answer, register_job_kind, register_run_panel
from crucible import llm, pages
from crucible.fake_answers import FAKE_ANSWERS
from crucible.forms import CrucibleLaunchForm
from crucible.kinds import CRUCIBLE
from crucible.models import CrucibleRun
from crucible.prompts import EXTRACT


def _run_url(job: Job) -> str | None:
    """What a Crucible job made: its run's page, once its last item stored the run (none when it could not be)."""
    run_id = CrucibleRun.objects.filter(job=job, run__isnull=False).values_list("run__run_id", flat=True).first()
    return reverse("collection:run", args=[run_id]) if run_id else None


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_job_kind(
        JobKind(
            kind=CRUCIBLE,
            label="Crucible run from a bank",
            command="run_crucible",
            description=(
                "Writes a baseline run from a question bank: for each question, the sentence the topic's "
                "retrieved documents answer it with most confidently, citing its document."
            ),
            compute=llm.item_compute,
            store=llm.item_store,
            create=llm.crucible_job_create,
            form=CrucibleLaunchForm,
            prompts=(EXTRACT,),
            output_url=_run_url,
        )
    )
    register_run_panel(RunPanel("crucible/run_panel.html", pages.run_panel_context, order=10))
