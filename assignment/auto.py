"""AutoAssign: an LLM labels the nuggets of one answer listwise, at most 10 nuggets per call.

One job item is one answer: all its labels are written together or not at
all, so a batch that fails leaves no answer half-labelled.
"""

from functools import partial

from django.contrib.auth.models import User
from django.db import connections, router

from assessor.jobs.engine import JobRequestInvalid, job_create, job_prompt, job_source, job_source_id, output_name_check
from assessor.jobs.llm.client import LLMConfig, LLMSession
from assessor.jobs.llm.parsing import parse_label_list
from assessor.jobs.llm.prompts import as_list_text, prompt_messages
from assessor.jobs.selection import chunks, runs_select, topics_select
from assessor.models import Answer, Job, JobItem, LabelSource, Topic
from assessor.models.rows import rows_insert
from assignment.dependents import stale_settle
from assignment.kinds import AUTO_ASSIGN, LABEL_FAMILY
from assignment.models import AssignmentLabel, RetiredAssignmentLabel
from nuggets.models import Nugget, NuggetSet

BATCH_SIZE = 10
LABELS = tuple(AssignmentLabel.Label.values)  # support, partial_support, not_support


def auto_assign_job_create(
    *,
    nuggets: str,
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
        kind=AUTO_ASSIGN,
        name=name,
        taken=AssignmentLabel.objects.filter(assigner=name).exists(),
        family=LABEL_FAMILY,
    )
    topic_rows = topics_select(topics)
    run_rows = runs_select(runs)
    sets = {
        nugget_set.topic_id: nugget_set
        for nugget_set in NuggetSet.objects.filter(
            name=nuggets, topic__in=topic_rows, form=NuggetSet.Form.FACTS
        ).exclude(nuggets=None)
    }
    if not sets:
        raise JobRequestInvalid(f"no nugget set named {nuggets!r} with nuggets for the chosen topics")
    chosen = Answer.objects.filter(run__in=run_rows, topic_id__in=sets).order_by("topic_id", "run__run_id")
    if answers is not None:
        chosen = chosen.filter(pk__in=answers)
    items = [
        (f"answer:{answer_id}", {"answer": answer_id, "nugget_set": sets[topic_id].pk})
        for answer_id, topic_id in chosen.values_list("id", "topic_id")
    ]
    params = {
        "nuggets": nuggets,
        "runs": [run.run_id for run in run_rows] if runs else [],
        "topics": sorted(sets) if topics else [],
        "queue": queue or "",
    }
    return job_create(
        kind=AUTO_ASSIGN,
        output_name=name,
        params=params,
        items=items,
        prompts=["assign"],
        user=user,
        config=config,
        endpoint=endpoint,
        family=LABEL_FAMILY,
    )


def auto_assign_rerun_create(
    *, name: str, user: User | None = None, queue: str | None = None, config: LLMConfig | None = None
) -> Job:
    """Label again what a change of the nugget lists took from an LLM assigner: only the stale nuggets.

    The endpoint, model and prompt versions must be the source's (its labels
    stay one judge's); calls already made are answered from the cache.
    """
    source = LabelSource.objects.filter(family=LABEL_FAMILY, name=name).first()
    if source is None or source.kind != LabelSource.Kind.LLM:
        raise JobRequestInvalid(f"{name!r} is not an LLM assigner")
    if not source.stale:
        raise JobRequestInvalid(f"the LLM assigner {name!r} is up to date: nothing to label again")
    items = []
    for set_name, topics in sorted(source.stale.items()):
        for nugget_set in NuggetSet.objects.filter(name=set_name, topic_id__in=list(topics)).order_by("topic_id"):
            nuggets = sorted(topics[nugget_set.topic_id])
            answers = set(
                AssignmentLabel.objects.filter(source=source, nugget__nugget_set=nugget_set).values_list(
                    "answer_id", flat=True
                )
            )
            answers |= set(
                RetiredAssignmentLabel.objects.filter(source=source, nugget_set=nugget_set).values_list(
                    "answer_id", flat=True
                )
            )
            items += [
                (
                    f"answer:{answer_id}:set:{nugget_set.pk}:v{nugget_set.version}",
                    {"answer": answer_id, "nugget_set": nugget_set.pk, "nuggets": nuggets},
                )
                for answer_id in sorted(answers)
            ]
    params = {"rerun": True, "stale": source.stale, "queue": queue or ""}
    return job_create(
        kind=AUTO_ASSIGN,
        output_name=name,
        params=params,
        items=items,
        prompts=["assign"],
        user=user,
        config=config,
        endpoint=source.endpoint_name or None,
        family=LABEL_FAMILY,
        owns_output=False,  # it adds to the output of the job that made the assigner
    )


def answer_and_nuggets(answer_id: int, nugget_set_id: int) -> tuple[str, str, list[tuple[int, str]]]:
    """The answer's query and text, and the set's nuggets (id, text) in their order, in one plain statement: built
    through the ORM, the two reads cost more CPU than the rest of an item but its calls."""
    connection = connections[router.db_for_read(Answer)]
    quote = connection.ops.quote_name
    answers, topics, nuggets = (quote(model._meta.db_table) for model in (Answer, Topic, Nugget))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT t.query, a.text, n.id, n.text FROM {answers} a JOIN {topics} t ON t.id = a.topic_id "
            f"LEFT JOIN {nuggets} n ON n.nugget_set_id = %s WHERE a.id = %s ORDER BY n.position, n.id",
            [nugget_set_id, answer_id],
        )
        rows = cursor.fetchall()
    if not rows:
        raise Answer.DoesNotExist("Answer matching query does not exist.")
    query, passage = rows[0][0], rows[0][1]
    return query, passage, [(nugget_id, text) for _q, _p, nugget_id, text in rows if nugget_id is not None]


def item_compute(*, job: Job, item: JobItem, llm: LLMSession) -> list[tuple[int, str]]:
    query, passage, nuggets = answer_and_nuggets(item.payload["answer"], item.payload["nugget_set"])
    if "nuggets" in item.payload:  # a re-run: only the nuggets that changed
        changed = set(item.payload["nuggets"])
        nuggets = [(nugget_id, text) for nugget_id, text in nuggets if nugget_id in changed]
    prompt = job_prompt(job, "assign")
    batches = list(chunks(nuggets, BATCH_SIZE))
    # Each batch's labels are asked on their own (nothing of one batch's answer goes into another's prompt), so
    # the batches' calls go out together.
    asks = [
        (
            prompt_messages(
                prompt, n=len(batch), query=query, passage=passage, nuggets=as_list_text([text for _, text in batch])
            ),
            partial(parse_label_list, expected=len(batch), allowed=LABELS),
        )
        for batch in batches
    ]
    answers = llm.ask_together(prompt, asks)
    return [
        (nugget_id, label)
        for batch, labels in zip(batches, answers, strict=True)
        for (nugget_id, _), label in zip(batch, labels, strict=True)
    ]


def item_rows(*, job: Job, item: JobItem, result: list[tuple[int, str]]) -> list[tuple[type, list[dict]]] | None:
    """The labels of an answer, as rows to insert; None for a re-run's item, whose store settles the stale nuggets."""
    if "nuggets" in item.payload:
        return None
    return [(AssignmentLabel, _label_rows(job, item, result, source_id=job_source_id(job, LABEL_FAMILY)))]


def item_store(*, job: Job, item: JobItem, result: list[tuple[int, str]]) -> None:
    rerun = "nuggets" in item.payload
    source_id = job_source(job, LABEL_FAMILY).pk if rerun else job_source_id(job, LABEL_FAMILY)
    rows_insert(AssignmentLabel, _label_rows(job, item, result, source_id=source_id))
    if rerun:
        stale_settle(job_source(job, LABEL_FAMILY), NuggetSet.objects.get(pk=item.payload["nugget_set"]))


def _label_rows(job: Job, item: JobItem, result: list[tuple[int, str]], *, source_id: int) -> list[dict]:
    return [
        {
            "answer_id": item.payload["answer"],
            "nugget_id": nugget_id,
            "assigner": job.output_name,
            "assigner_kind": AssignmentLabel.AssignerKind.AUTO,
            "source_id": source_id,
            "label": label,
            "job_id": job.pk,
        }
        for nugget_id, label in result
    ]
