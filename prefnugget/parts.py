"""What the prefnugget app adds to the registry: its two bank jobs (their banks are the nuggets app's)."""

from django.urls import reverse

from assessor.models import Job
from assessor.registry import JobKind, register_fake_answer, register_job_kind
from prefnugget import jobs
from prefnugget.fake_answers import FAKE_ANSWERS
from prefnugget.forms import PrefNuggetLaunchForm, QueryBankLaunchForm
from prefnugget.kinds import PREFNUGGET_BANK, QUERY_BANK
from prefnugget.prompts import EXTRACT, QUERY_ONLY


def _banks_url(job: Job) -> str:
    """What a bank job made: its question banks of every topic, as the download of their name gives them."""
    return reverse("collection:download_banks", args=[job.output_name])


def register() -> None:
    register_fake_answer(*FAKE_ANSWERS)
    register_job_kind(
        JobKind(
            kind=PREFNUGGET_BANK,
            label="PrefNugget bank",
            command="run_prefnugget",
            description="An LLM asks, for each (winner, loser) pair of a preference source (or for random pairs "
            "of reports), which questions the winner answers better: a bank of up to 20 questions a topic.",
            compute=jobs.prefnugget_item_compute,
            store=jobs.prefnugget_item_store,
            create=jobs.prefnugget_job_create,
            form=PrefNuggetLaunchForm,
            prompts=(EXTRACT,),
            output_url=_banks_url,
        )
    )
    register_job_kind(
        JobKind(
            kind=QUERY_BANK,
            label="Query-only bank",
            command="run_query_bank",
            description="An LLM writes the questions a good report should answer from the request alone: up to "
            "20 a topic.",
            compute=jobs.query_bank_item_compute,
            store=jobs.query_bank_item_store,
            create=jobs.query_bank_job_create,
            form=QueryBankLaunchForm,
            prompts=(QUERY_ONLY,),
            output_url=_banks_url,
        )
    )
