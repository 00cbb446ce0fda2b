"""The LLM judge of an app on the answer-label kit: one item an answer of the chosen runs and topics, one call an
item with the app's prompt, the answer read as one of the app's labels (re-asked otherwise)."""

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from assessor.jobs.engine import job_create, job_prompt, job_source, output_name_check
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.parsing import parse_single_label
from assessor.jobs.llm.prompts import prompt_messages
from assessor.jobs.selection import runs_select, topics_select
from assessor.labelkit.spec import AnswerLabels
from assessor.models import Answer, Job, JobItem, LabelSource


@dataclass(frozen=True)
class AnswerJob:
    """The registry's `JobKind` functions of an `AnswerLabels`."""

    spec: AnswerLabels

    def create(
        self,
        *,
        name: str,
        runs: list[str] | None = None,
        topics: list[str] | None = None,
        user: User | None = None,
        queue: str | None = None,
        config: LLMConfig | None = None,
        endpoint: str | None = None,
    ) -> Job:
        """The job's `create`, for the launch page and the command line (raises JobRequestInvalid)."""
        spec = self.spec
        taken = LabelSource.objects.filter(family=spec.name, name=name).exists()
        output_name_check(kind=spec.job_kind, name=name, taken=taken, family=spec.name)
        answers = Answer.objects.filter(run__in=runs_select(runs), topic__in=topics_select(topics)).order_by("pk")
        items = [(str(answer_id), {"answer": answer_id}) for answer_id in answers.values_list("pk", flat=True)]
        params = {"runs": runs or [], "topics": topics or [], "queue": queue or ""}
        with transaction.atomic():
            return job_create(
                kind=spec.job_kind,
                output_name=name,
                params=params,
                items=items,
                prompts=[spec.prompt.name],
                user=user,
                config=config,
                endpoint=endpoint,
                family=spec.name,
            )

    def compute(self, *, job: Job, item: JobItem, llm: LLMSession) -> str:
        """One call, outside any transaction: the answer's label."""
        answer = Answer.objects.select_related("topic").get(pk=item.payload["answer"])
        prompt = job_prompt(job, self.spec.prompt.name)
        messages = prompt_messages(prompt, query=answer.topic.query, answer=answer.text)
        return llm.ask(prompt, messages, lambda raw: parse_single_label(raw, allowed=self.spec.labels))

    def store(self, *, job: Job, item: JobItem, result: Any) -> None:
        """Inside the transaction that marks the item done."""
        source = job_source(job, self.spec.name)
        self.spec.model._default_manager.create(answer_id=item.payload["answer"], source=source, job=job, label=result)
