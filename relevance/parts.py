"""What the relevance app adds to the registry: the UMBRELA job, which writes a qrels source."""

from assessor.jobs.forms import RunsLaunchForm
from assessor.registry import JobKind, register_fake_answer, register_job_kind
from relevance import umbrela
from relevance.fake_answers import FAKE_ANSWERS
from relevance.kinds import UMBRELA
from relevance.prompts import UMBRELA as UMBRELA_PROMPT


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_job_kind(
        JobKind(
            kind=UMBRELA,
            label="UMBRELA relevance grades",
            command="run_umbrela",
            description="An LLM grades the relevance (0-3) of the segments each run cites, into a qrels source.",
            compute=umbrela.item_compute,
            store=umbrela.item_store,
            create=umbrela.umbrela_job_create,
            form=RunsLaunchForm,
            prompts=(UMBRELA_PROMPT,),
        )
    )
