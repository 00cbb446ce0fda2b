"""What the crucible app adds to the registry: its job, which writes a run from a question bank."""

from assessor.registry import JobKind, register_job_kind
from crucible import llm
from crucible.forms import CrucibleLaunchForm
from crucible.kinds import CRUCIBLE
from crucible.prompts import EXTRACT


def register() -> None:
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
