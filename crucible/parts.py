"""What the crucible app adds to the registry: its job, which writes a run from a question bank, and the
section of that run's page that says so."""

from assessor.registry import JobKind, RunPanel, register_fake_answer, register_job_kind, register_run_panel
from crucible import llm, pages
from crucible.fake_answers import FAKE_ANSWERS
from crucible.forms import CrucibleLaunchForm
from crucible.kinds import CRUCIBLE
from crucible.prompts import EXTRACT


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
        )
    )
    register_run_panel(RunPanel("crucible/run_panel.html", pages.run_panel_context, order=10))
