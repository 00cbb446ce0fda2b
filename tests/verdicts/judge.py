"""The LLM judge: its prompt and its job, one item per answer of the chosen runs and topics."""

from django.contrib.auth.models import User
from django.db import transaction

from assessor.jobs.engine import job_create, job_prompt, job_source, output_name_check
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.parsing import parse_single_label
from assessor.jobs.llm.prompts import PromptText, prompt_messages
from assessor.jobs.selection import runs_select, topics_select
from assessor.models import Answer, Job, JobItem, LabelSource
from tests.verdicts.models import LABEL_FAMILY, LABELS, VERDICT_JOB, Verdict

VERDICT = PromptText(
    name="answer_verdict",
    system="You are YesNoJudgeLLM, an assistant that says whether an answer answers a question.",
    user="Question: {query}\nAnswer: {answer}\n"
    "Does the answer answer the question? Reply with exactly one word: yes or no.",
    params=(("temperature", 0.0), ("max_tokens", 5)),
)


def verdict_job_create(
    *,
    name: str,
    runs: list[str] | None = None,
    topics: list[str] | None = None,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
) -> Job:
    """The job's `create`, for the launch page (raises JobRequestInvalid)."""
    taken = LabelSource.objects.filter(family=LABEL_FAMILY, name=name).exists()
    output_name_check(kind=VERDICT_JOB, name=name, taken=taken, family=LABEL_FAMILY)
    answers = Answer.objects.filter(run__in=runs_select(runs), topic__in=topics_select(topics)).order_by("pk")
    items = [(str(answer_id), {"answer": answer_id}) for answer_id in answers.values_list("pk", flat=True)]
    params = {"runs": runs or [], "topics": topics or [], "queue": queue or ""}
    with transaction.atomic():
        return job_create(
            kind=VERDICT_JOB,
            output_name=name,
            params=params,
            items=items,
            prompts=[VERDICT.name],
            user=user,
            config=config,
            endpoint=endpoint,
            family=LABEL_FAMILY,
        )


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> str:
    """One call, outside any transaction: the answer's verdict."""
    answer = Answer.objects.select_related("topic").get(pk=item.payload["answer"])
    prompt = job_prompt(job, VERDICT.name)
    messages = prompt_messages(prompt, query=answer.topic.query, answer=answer.text)
    return llm.ask(prompt, messages, lambda raw: parse_single_label(raw, allowed=LABELS))


def item_store(*, job: Job, item: JobItem, result: str) -> None:
    """Inside the transaction that marks the item done."""
    source = job_source(job, LABEL_FAMILY)
    Verdict.objects.create(answer_id=item.payload["answer"], source=source, job=job, label=result)
