"""Preferences by an LLM, as PrefNugget's first phase makes them: one call per sampled pair of reports.

The pairs are `sampling.report_pairs` of each topic's reports (by run id); the prompt is the reference's,
ties allowed unless the job is must-decide; the answer is read as the reference's converter reads it
(`preference_read`). Each pair's label goes into the job's preference source, with the job on it.
"""

import re
from dataclasses import dataclass
from functools import partial

from django.contrib.auth.models import User

from assessor.jobs.engine import job_create, job_prompt, job_source, output_name_check
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.prompts import prompt_messages
from assessor.jobs.selection import runs_select, topics_select
from assessor.models import Answer, Job, JobItem, LabelSource
from preferences.kinds import PREFERENCES, PREFERENCES_FAMILY
from preferences.models import PreferenceLabel
from preferences.pairs import PlannedPair, planned_pairs
from preferences.prompts import PREFERENCE_MUST_DECIDE, PREFERENCE_TIES
from reports.chat_layout import answer_field, answer_float, answer_sections
from reports.texts import request_texts

# The reference's converters: the first digit the prompt allows, as a word of its own.
TIES_LABEL = re.compile(r"\b([0-2])\b")
MUST_DECIDE_LABEL = re.compile(r"\b([1-2])\b")


@dataclass(frozen=True)
class Reading:
    label: int | None  # 1, 2 or 0 (tie); None: no label the prompt allows
    confidence: float | None
    reasoning: str


def preference_read(raw: str, *, must_decide: bool) -> Reading:
    """An answer's preference. An answer without a `better_passage` section is unusable (asked again); one
    whose section names no allowed digit is kept as the reference keeps it: no label with ties allowed
    (its -1), a tie when the prompt must decide (its 0). Both are dropped from Borda."""
    value = answer_field(raw, "better_passage")
    found = (MUST_DECIDE_LABEL if must_decide else TIES_LABEL).search(value)
    if found is not None:
        label: int | None = int(found.group(1))
    else:
        label = 0 if must_decide else None
    return Reading(label, answer_float(raw, "confidence"), answer_sections(raw).get("reasoning", ""))


def preferences_select(*, topics: list[str] | None = None, runs: list[str] | None = None) -> list[PlannedPair]:
    """The pairs a job of this selection would judge (raises JobRequestInvalid for an unknown id)."""
    return planned_pairs(topic_ids=[topic.id for topic in topics_select(topics)], runs=runs_select(runs))


def prompt_name(*, must_decide: bool) -> str:
    return (PREFERENCE_MUST_DECIDE if must_decide else PREFERENCE_TIES).name


def preferences_job_create(
    *,
    name: str,
    topics: list[str] | None = None,
    runs: list[str] | None = None,
    must_decide: bool = False,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
) -> Job:
    output_name_check(
        kind=PREFERENCES,
        name=name,
        taken=LabelSource.objects.filter(family=PREFERENCES_FAMILY, name=name).exists(),
        family=PREFERENCES_FAMILY,
    )
    pairs = preferences_select(topics=topics, runs=runs)
    items = [(pair.key, {"topic": pair.topic_id, "first": pair.first, "second": pair.second}) for pair in pairs]
    params = {"runs": runs or [], "topics": topics or [], "must_decide": must_decide, "queue": queue or ""}
    return job_create(
        kind=PREFERENCES,
        output_name=name,
        params=params,
        items=items,
        prompts=[prompt_name(must_decide=must_decide)],
        user=user,
        config=config,
        endpoint=endpoint,
        family=PREFERENCES_FAMILY,
    )


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> Reading:
    topic_id, first, second = item.payload["topic"], item.payload["first"], item.payload["second"]
    request = request_texts([topic_id])[topic_id]
    passages = dict(Answer.objects.filter(pk__in=[first, second]).values_list("pk", "text"))
    must_decide = bool(job.params.get("must_decide"))
    prompt = job_prompt(job, prompt_name(must_decide=must_decide))
    messages = prompt_messages(
        prompt,
        query_title=request.title,
        query_background=request.background,
        query_problem=request.problem_statement,
        passage_1=passages[first],
        passage_2=passages[second],
    )
    return llm.ask(prompt, messages, partial(preference_read, must_decide=must_decide))


def item_store(*, job: Job, item: JobItem, result: Reading) -> None:
    PreferenceLabel.objects.create(
        source=job_source(job, PREFERENCES_FAMILY),
        topic_id=item.payload["topic"],
        first_id=item.payload["first"],
        second_id=item.payload["second"],
        label=result.label,
        confidence=result.confidence,
        reasoning=result.reasoning,
        job=job,
    )
