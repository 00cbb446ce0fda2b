"""Automatic support judging: an LLM labels each (sentence, first cited segment) pair FS, PS or NS.

One job item is one answer; its labels are written together. Sentences with
no citation are NS by the protocol without any call, and need no row (the
support scores count them as NS). A first cited segment whose text the
collection lacks cannot be shown to the judge: it is stored as unjudged,
without a call, which removes the sentence from both denominators.

The citation shown to the judge is the segment's title, ": " and its text
(the text alone when the collection has no title), as the track showed it.
"""

from functools import partial

from django.contrib.auth.models import User

from assessor.jobs.engine import job_create, job_prompt, job_source, output_name_check
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.parsing import parse_one_phrase, parse_single_label
from assessor.jobs.llm.prompts import prompt_messages, prompt_sha256
from assessor.jobs.selection import runs_select, topics_select
from assessor.models import Answer, Citation, Job, JobItem, PromptTemplate, Segment
from support.kinds import AUTO_SUPPORT, LABEL_FAMILY
from support.models import SupportLabel
from support.prompts import SUPPORT_PROJECT

LABELS = {"FS": SupportLabel.Label.FS, "PS": SupportLabel.Label.PS, "NS": SupportLabel.Label.NS}
PHRASES = {"Full Support": "FS", "Partial Support": "PS", "No Support": "NS"}


def label_parser(prompt: PromptTemplate):
    """How the version's answer names the label: one of the three phrases, or the first version's FS/PS/NS."""
    if prompt.sha256 == prompt_sha256(SUPPORT_PROJECT):
        return partial(parse_single_label, allowed=tuple(LABELS))
    return lambda raw: PHRASES[parse_one_phrase(raw, phrases=tuple(PHRASES))]


def citation_text(segment: Segment) -> str:
    return f"{segment.title}: {segment.text}" if segment.title else segment.text


def auto_support_job_create(
    *,
    name: str,
    runs: list[str] | None = None,
    topics: list[str] | None = None,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    answers: list[int] | None = None,
    endpoint: str | None = None,
) -> Job:
    """A job over the selected topics and runs (`answers`: only these answers, such as a study's sample)."""
    output_name_check(
        kind=AUTO_SUPPORT,
        name=name,
        taken=SupportLabel.objects.filter(method=name).exists(),
        family=LABEL_FAMILY,
    )
    topic_rows = topics_select(topics)
    run_rows = runs_select(runs)
    cited = (
        Citation.objects.filter(position=0, sentence__answer__run__in=run_rows, sentence__answer__topic__in=topic_rows)
        .values_list("sentence__answer_id", flat=True)
        .distinct()
    )
    if answers is not None:
        cited = cited.filter(sentence__answer_id__in=answers)
    chosen = Answer.objects.filter(pk__in=cited).order_by("topic_id", "run__run_id").values_list("id", flat=True)
    items = [(f"answer:{answer_id}", {"answer": answer_id}) for answer_id in chosen]
    params = {
        "runs": [run.run_id for run in run_rows] if runs else [],
        "topics": [topic.id for topic in topic_rows] if topics else [],
        "queue": queue or "",
    }
    return job_create(
        kind=AUTO_SUPPORT,
        output_name=name,
        params=params,
        items=items,
        prompts=["support"],
        user=user,
        config=config,
        endpoint=endpoint,
        family=LABEL_FAMILY,
    )


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> list[tuple[int, int]]:
    answer = Answer.objects.select_related("topic").get(pk=item.payload["answer"])
    firsts = Citation.objects.filter(position=0, sentence__answer=answer).select_related("sentence", "segment")
    prompt = job_prompt(job, "support")
    parse = label_parser(prompt)
    citations = list(firsts.order_by("sentence__index"))
    judged = [citation for citation in citations if citation.segment.text]
    # Each citation is judged on its own (no answer goes into another's prompt): the calls go out together.
    asks = [
        (
            prompt_messages(
                prompt,
                query=answer.topic.query,
                sentence=citation.sentence.text,
                passage=citation.segment.text,
                statement=citation.sentence.text,
                citation=citation_text(citation.segment),
            ),
            parse,
        )
        for citation in judged
    ]
    answers = dict(zip((citation.pk for citation in judged), llm.ask_together(prompt, asks), strict=True))
    return [
        (citation.pk, LABELS[answers[citation.pk]] if citation.pk in answers else SupportLabel.Label.UNJUDGED)
        for citation in citations
    ]


def item_store(*, job: Job, item: JobItem, result: list[tuple[int, int]]) -> None:
    source = job_source(job, LABEL_FAMILY)
    SupportLabel.objects.bulk_create(
        SupportLabel(
            citation_id=citation_id,
            method=job.output_name,
            method_kind=SupportLabel.MethodKind.AUTO,
            source=source,
            label=label,
            job=job,
        )
        for citation_id, label in result
    )
