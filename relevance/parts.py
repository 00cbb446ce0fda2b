"""What the relevance app adds to the registry: the UMBRELA job, which writes a qrels source."""

from django.urls import reverse

from assessor.jobs.forms import RunsLaunchForm
from assessor.models import Job
from assessor.registry import JobKind, register_fake_answer, register_job_kind
from relevance import umbrela
from relevance.fake_answers import FAKE_ANSWERS
from relevance.kinds import UMBRELA
from relevance.prompts import UMBRELA as UMBRELA_PROMPT


def _qrels_url(job: Job) -> str:
    """What an UMBRELA job made: its qrels source, as the qrels download gives it (TREC qrels lines)."""
    return reverse("collection:download_qrels", args=[job.output_name])


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
            output_url=_qrels_url,
        )
    )
