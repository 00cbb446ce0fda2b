"""AutoNuggets, and the 30 drafts of AutoNuggets+Edits, as the protocol runs them.

For each topic (one job item): the segments a chosen qrels source grades >= 1,
in windows of 10, each turn sending the query, the window and the current list
and getting the updated list back (starting empty, capped at 30); then, unless
only drafts are wanted, importance in batches of at most 10, a stable sort
vital before okay, and the first 20 kept.

Segments are taken by decreasing grade, then docid, so a run is reproducible;
segments whose text the collection lacks cannot be shown and are left out.
"""

from functools import partial

from django.contrib.auth.models import User

from assessor.jobs.engine import (
    ItemUnworkable,
    JobRequestInvalid,
    job_create,
    job_prompt,
    job_source,
    output_name_check,
)
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.parsing import parse_label_list, parse_nugget_list
from assessor.jobs.llm.prompts import as_list_text, prompt_messages
from assessor.jobs.selection import chunks, topics_select
from assessor.models import Job, JobItem, Qrel, QrelSource, Topic
from nuggets.kinds import AUTO_NUGGETS, DRAFT_NUGGETS, LABEL_FAMILY
from nuggets.models import Nugget, NuggetSet

WINDOW = 10
MAX_DRAFTS = NuggetSet.MAX_DRAFTS  # 30
MAX_NUGGETS = NuggetSet.MAX_NUGGETS  # 20
IMPORTANCE_BATCH = 10
IMPORTANCE_LABELS = tuple(Nugget.Importance.values)  # vital, okay


def vital_first(nuggets: list[tuple[str, str]], *, keep: int = MAX_NUGGETS) -> list[tuple[str, str]]:
    """Vital before okay, keeping the list order within each class, cut to `keep`."""
    return sorted(nuggets, key=lambda nugget: nugget[1] != Nugget.Importance.VITAL)[:keep]


def auto_nuggets_job_create(
    *,
    name: str,
    qrels: str = "nist",
    topics: list[str] | None = None,
    drafts: bool = False,
    user: User | None = None,
    queue: str | None = None,
    config: LLMConfig | None = None,
    endpoint: str | None = None,
) -> Job:
    kind = DRAFT_NUGGETS if drafts else AUTO_NUGGETS
    output_name_check(
        kind=kind, name=name, taken=NuggetSet.objects.filter(name=name).exists(), family=LABEL_FAMILY
    )
    if not QrelSource.objects.filter(name=qrels).exists():
        raise JobRequestInvalid(f"no qrels source named {qrels!r}")
    topic_rows = topics_select(topics)
    judged = set(
        Qrel.objects.filter(source__name=qrels, grade__gte=Qrel.RELEVANT_MIN_GRADE, topic__in=topic_rows)
        .values_list("topic_id", flat=True)
        .distinct()
    )
    # All topics: those the source judges; named topics: each, failing with a reason if unjudged.
    chosen = topic_rows if topics else [topic for topic in topic_rows if topic.id in judged]
    items = [(f"topic:{topic.id}", {"topic": topic.id}) for topic in chosen]
    prompts = ["nuggetize"] if drafts else ["nuggetize", "nugget_importance"]
    params = {"qrels": qrels, "topics": [t.id for t in chosen] if topics else [], "drafts": drafts, "queue": queue or ""}
    return job_create(
        kind=kind,
        output_name=name,
        params=params,
        items=items,
        prompts=prompts,
        user=user,
        config=config,
        endpoint=endpoint,
        family=LABEL_FAMILY,
    )


def relevant_texts(*, topic: Topic, qrels: str) -> list[str]:
    rows = (
        Qrel.objects.filter(source__name=qrels, topic=topic, grade__gte=Qrel.RELEVANT_MIN_GRADE)
        .exclude(segment__text="")
        .order_by("-grade", "segment_id")
        .values_list("segment__text", flat=True)
    )
    return list(rows)


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> list[tuple[str, str]]:
    topic = Topic.objects.get(pk=item.payload["topic"])
    qrels = job.params["qrels"]
    texts = relevant_texts(topic=topic, qrels=qrels)
    if not texts:
        raise ItemUnworkable(f"qrels {qrels!r} grade no segment with text >= 1 for topic {topic.id}")
    nuggetize = job_prompt(job, "nuggetize")
    current: list[str] = []
    for window in chunks(texts, WINDOW):
        context = "\n".join(f"[{number}] {text}" for number, text in enumerate(window, start=1))
        messages = prompt_messages(
            nuggetize, query=topic.query, context=context, nuggets=as_list_text(current), count=len(current)
        )
        current = llm.ask(nuggetize, messages, partial(parse_nugget_list, max_nuggets=MAX_DRAFTS))
    if job.kind == DRAFT_NUGGETS:
        return [(text, "") for text in current]
    scorer = job_prompt(job, "nugget_importance")
    importance: list[str] = []
    for batch in chunks(current, IMPORTANCE_BATCH):
        messages = prompt_messages(scorer, n=len(batch), query=topic.query, nuggets=as_list_text(batch))
        importance += llm.ask(
            scorer, messages, partial(parse_label_list, expected=len(batch), allowed=IMPORTANCE_LABELS)
        )
    return vital_first(list(zip(current, importance, strict=True)))


def item_store(*, job: Job, item: JobItem, result: list[tuple[str, str]]) -> None:
    drafts = job.kind == DRAFT_NUGGETS
    nugget_set = NuggetSet.objects.create(
        topic_id=item.payload["topic"],
        kind=NuggetSet.Kind.DRAFT if drafts else NuggetSet.Kind.AUTO,
        name=job.output_name,
        source=job_source(job, LABEL_FAMILY),
        job=job,
        status=NuggetSet.Status.SUBMITTED,
    )
    Nugget.objects.bulk_create(
        Nugget(nugget_set=nugget_set, position=position, text=text, importance=importance, job=job)
        for position, (text, importance) in enumerate(result)
    )
