"""Writes of support judging: giving the work, saving a label, submit.

A label is saved at once and checked like ManualAssign's (assessor.work.judging):
the work must be open and at the page's version, and the label the page
showed must still be the stored one, so that two tabs never silently
overwrite each other. Post-editing stores, beside the final label, the LLM
label that was shown and the label it came from.
"""

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet, Subquery

from assessor.models import AssessorWork, Citation, LabelSource, Topic
from assessor.scoring.kept import scores_refresh_label
from assessor.work.judging import (
    JudgeError,
    Replayed,
    answer_at,
    label_write,
    locked_open_work,
    operation_answer,
    operation_read_with,
    shuffled,
)
from assessor.work.prepared import IdList, Prepared, id_list, instance_from_row
from assessor.work.services import (
    WorkError,
    person_source_claim,
    replicate_source_claim,
    work_give,
    work_submit_mark,
)
from support.judging import (
    LABEL_SHORT,
    METHOD_OF_KIND,
    SUPPORT_KINDS,
    judgeable_pairs,
    llm_method_of,
    method_of,
    topic_pairs,
)
from support.kinds import LABEL_FAMILY, SUPPORT_POSTEDIT, SUPPORT_SCRATCH
from support.models import SupportLabel
from support.selectors import FAMILY

JUDGED_LABELS = tuple(int(label) for label in LABEL_SHORT)


@transaction.atomic
def support_work_give(
    *, topic: Topic, assessor: User, kind: str, by: User | None, llm_method: str = "", method_name: str = ""
) -> AssessorWork:
    """Give a topic's support judging in one condition.

    Post-editing shows the labels of an automatic method: the one named, or
    the topic's only one; its name is kept in the work's name field. The
    assessor's labels go into the people's source `method_name` (the
    condition's name by default), which starts empty on this topic.
    """
    if kind not in SUPPORT_KINDS:
        raise WorkError(f"Unknown support condition {kind!r}.")
    if kind == SUPPORT_POSTEDIT:
        # Shown labels come from an automatic method that no person made, whatever its name.
        methods = SupportLabel.objects.filter(
            method_kind=SupportLabel.MethodKind.AUTO, citation__sentence__answer__topic=topic
        ).exclude(source__kind=LabelSource.Kind.PERSON)
        if llm_method:
            methods = methods.filter(method=llm_method)
        names = sorted(set(methods.values_list("method", flat=True).distinct()[:3]))
        if not names:
            wanted = f" named {llm_method!r}" if llm_method else ""
            raise WorkError(f"Topic {topic.pk} has no automatic support labels{wanted} to post-edit.")
        if len(names) > 1:
            raise WorkError(f"Topic {topic.pk} has several automatic support methods ({', '.join(names)}): name one.")
        llm_method = names[0]
    else:
        llm_method = ""
    source = person_source_claim(family=LABEL_FAMILY, name=method_name or METHOD_OF_KIND[kind], by=by)
    if SupportLabel.objects.filter(source=source, citation__sentence__answer__topic=topic).exists():
        raise WorkError(
            f"The support method {source.name!r} already has labels on topic {topic.pk} from other work: "
            "name another method for this work."
        )
    return work_give(topic=topic, assessor=assessor, kind=kind, by=by, nugget_set_name=llm_method, source=source)


@transaction.atomic
def support_replicate_give(
    *, topic: Topic, assessor: User, by: User | None, of_method: str, method_name: str
) -> AssessorWork:
    """Give a second assessor an independent replicate of a topic's from-scratch support judging under `of_method`.

    The same pairs, judged from scratch into the people's source `method_name`,
    marked as a replicate of the first; blind to its labels by provenance (the
    pages read only their own work's labels). Post-editing has no replicate: a
    replicate sees no LLM output.
    """
    first = (
        AssessorWork.objects.filter(
            topic=topic, kind__in=SUPPORT_KINDS, source__family=LABEL_FAMILY, source__name=of_method
        )
        .select_related("source")
        .first()
    )
    if first is None or first.source is None:
        return _imported_replicate_give(topic=topic, assessor=assessor, by=by, of_method=of_method, name=method_name)
    if first.kind != SUPPORT_SCRATCH:
        raise WorkError(
            f"{of_method!r} is post-editing of LLM labels: a replicate sees no LLM output, "
            "so only from-scratch judging has one."
        )
    source = replicate_source_claim(family=LABEL_FAMILY, name=method_name, of=first.source, by=by)
    return work_give(
        topic=topic,
        assessor=assessor,
        kind=SUPPORT_SCRATCH,
        by=by,
        source=source,
        blind_to=[first.source],
    )


def _imported_replicate_give(
    *, topic: Topic, assessor: User, by: User | None, of_method: str, name: str
) -> AssessorWork:
    """A replicate of people's support labels imported from a file (NIST's from-scratch judgments): the pairs
    they judged on the topic that an assessor can read, from scratch, blind to the file's labels."""
    imported = SupportLabel.objects.filter(
        method=of_method,
        citation__sentence__answer__topic=topic,
        citation__position=0,
        source__kind=LabelSource.Kind.FILE,
    )
    kinds = set(imported.values_list("method_kind", flat=True))
    if not kinds:
        raise WorkError(f"Topic {topic.pk} has no support work under the method {of_method!r} to replicate.")
    if kinds != {SupportLabel.MethodKind.SCRATCH}:
        raise WorkError(
            f"The imported {of_method!r} labels are not people's judging from scratch ({', '.join(sorted(kinds))}): "
            "a replicate sees no LLM output, so only from-scratch judging has one."
        )
    first_source = LabelSource.objects.get(family=LABEL_FAMILY, name=of_method)
    readable = {citation_id for _, citation_id in judgeable_pairs(topic_id=topic.pk)}
    pairs = sorted(set(imported.values_list("citation_id", flat=True)) & readable)
    if not pairs:
        raise WorkError(f"The {of_method!r} pairs of topic {topic.pk} cite passages with no text here: none to judge.")
    source = replicate_source_claim(family=LABEL_FAMILY, name=name, of=first_source, by=by, imported_people=True)
    # In the assessor's own shuffled order (a restricted work keeps the order of its items), never the file's.
    return work_give(
        topic=topic, assessor=assessor, kind=SUPPORT_SCRATCH, by=by, source=source, blind_to=[first_source],
        items=shuffled(pairs, assessor_id=assessor.pk, topic_id=topic.pk),
    )  # fmt: skip


def _label_clean(label) -> int:
    try:
        value = int(label)
    except (TypeError, ValueError):
        value = None
    if value not in JUDGED_LABELS:
        raise JudgeError(f"Unknown support label {label!r}: 2 (FS), 1 (PS) or 0 (NS).")
    return value


def _previous_clean(previous) -> int | None:
    if previous in (None, ""):
        return None
    try:
        return int(previous)
    except (TypeError, ValueError):
        raise JudgeError(f"Bad previous label {previous!r}.") from None


@transaction.atomic
def support_label_save(
    *,
    work_id: int,
    user: User,
    number: int,
    sentence_index: int,
    label,
    previous,
    expected_version: int | None,
    token: str | None = None,
    op_id: str = "",
) -> SupportLabel | Replayed:
    """Save the label of the pair at sentence `sentence_index` of the answer at `number`."""
    # The label source comes with the work (one query): a new label is stored under its name.
    work = locked_open_work(
        work_id=work_id, user=user, kinds=SUPPORT_KINDS, expected_version=expected_version, related=("source",)
    )
    value = _label_clean(label)
    previous_value = _previous_clean(previous)
    answer_id = answer_at(order=pair_answer_order(work=work, op_id=op_id), number=number, token=token)
    citation_id = pair_citation(work=work, answer_id=answer_id, sentence_index=sentence_index)
    if citation_id is None:
        raise JudgeError("This sentence has no pair to judge.")
    source = work.source
    if source is None:
        raise JudgeError("This work has no label source: an organizer has to give it again.")
    row = _OWN_LABEL.first(citation_id, work.pk)
    existing = instance_from_row(SupportLabel, _OWN_LABEL_FIELDS, row) if row else None

    def create(seconds: float) -> SupportLabel:
        shown_from = _llm_label_shown(work, citation_id)
        return SupportLabel.objects.create(
            citation_id=citation_id,
            method=source.name,
            method_kind=method_of(work),
            source=source,
            work=work,
            label=value,
            shown_label=shown_from.label if shown_from else None,
            shown_from=shown_from,
            created_by=user,
            seconds_spent=seconds,
        )

    saved = label_write(
        work=work,
        existing=existing,
        empty=None,
        value=value,
        previous=previous_value,
        conflict=lambda current: (
            f"This pair was judged in another tab (now {LABEL_SHORT.get(current, 'unjudged')}): the page shows it now."
        ),
        create=create,
        item=f"citation {citation_id}",
        op_id=op_id,
    )
    scores_refresh_label(work, family=FAMILY, columns=(source.name,), topic=work.topic_id, answer=answer_id)
    return saved


def _llm_label_shown(work: AssessorWork, citation_id: int) -> SupportLabel | None:
    """Post-editing: the LLM label of the pair the page showed (kept beside the person's); None from scratch."""
    if work.kind != SUPPORT_POSTEDIT:
        return None
    return (
        SupportLabel.objects.filter(
            citation_id=citation_id, method=llm_method_of(work), method_kind=SupportLabel.MethodKind.AUTO
        )
        .exclude(source__kind=LabelSource.Kind.PERSON)
        .first()
    )


def judgeable(citations: QuerySet[Citation]) -> QuerySet[Citation]:
    """The citations that are pairs to judge: a sentence's first, its passage with text (as
    `support.judging.judgeable_pairs` reads them)."""
    return citations.filter(position=0).exclude(segment__text="")


def judgeable_citations(*, topic_id: str) -> QuerySet[Citation]:
    return judgeable(Citation.objects.filter(sentence__answer__topic_id=topic_id))


def pair_answer_order(*, work: AssessorWork, op_id: str = "") -> list[int]:
    """The answers with pairs to judge in the work, in the assessor's order: `topic_pairs(work).order`, read
    without the topic's pairs and the work's labels (a save needs only the answer at its position). The same query
    reads whether the save's operation id (`op_id`) was applied already, for `operation_replayed`: call it once
    the work is locked."""
    if work.items:
        # A work restricted to some pairs shows their answers in the order the pairs were given.
        answer_of = dict(
            judgeable_citations(topic_id=work.topic_id)
            .filter(pk__in=work.items)
            .values_list("pk", "sentence__answer_id")
        )
        return list(dict.fromkeys(answer_of[c] for c in work.items if c in answer_of))
    row = _PAIR_ANSWERS.first(work.pk, work.topic_id, op_id)
    answers, operation = (id_list(row[0]), row[1]) if row else ([], None)
    if op_id:
        operation_read_with(work=work, op_id=op_id, answer=operation)
    return shuffled(answers, assessor_id=work.assessor_id, topic_id=work.topic_id)


def pair_citation(*, work: AssessorWork, answer_id: int, sentence_index: int) -> int | None:
    """The citation id of the pair to judge at a sentence of an answer in the work (None if it has none there):
    the sentence's first citation, its passage with text, and in a restricted work one of its items; as
    `topic_pairs` has it."""
    row = _PAIR_CITATION.first(answer_id, sentence_index)
    if row is None or (work.items and row[0] not in set(work.items)):
        return None
    return row[0]


# Prepared (assessor.work.judging.Prepared): written once, run on every save.
# One row, the work's: the topic's answers with pairs (each once) and the operation's first answer, if any.
_PAIR_ANSWERS = Prepared(
    lambda work_id, topic_id, op_id: (
        AssessorWork.objects.filter(pk=work_id)
        .annotate(
            answers=Subquery(
                judgeable_citations(topic_id=topic_id)
                .order_by()
                .values("sentence__answer__topic_id")
                .annotate(ids=IdList("sentence__answer_id", distinct=True))
                .values("ids")
            ),
            operation=Subquery(operation_answer(work_id, op_id)),
        )
        .order_by()
        .values_list("answers", "operation")
    ),
    int,
    str,
    str,
)
_PAIR_CITATION = Prepared(
    lambda answer_id, index: (
        judgeable(Citation.objects.filter(sentence__answer_id=answer_id, sentence__index=index))
        .order_by()
        .values_list("id")[:1]
    ),
    int,
    int,
)
_OWN_LABEL_FIELDS = ["id", "label", "seconds_spent"]
_OWN_LABEL = Prepared(
    lambda citation_id, work_id: (
        SupportLabel.objects.select_for_update()
        .filter(citation_id=citation_id, work_id=work_id)
        .order_by()
        .values_list(*_OWN_LABEL_FIELDS)[:1]
    ),
    int,
    int,
)


@transaction.atomic
def support_submit(*, work_id: int, user: User, expected_version: int | None) -> AssessorWork:
    work = locked_open_work(work_id=work_id, user=user, kinds=SUPPORT_KINDS, expected_version=expected_version)
    pairs = topic_pairs(work=work)
    missing = pairs.total - sum(pairs.done_counts())
    if missing:
        raise WorkError(f"{missing} pair(s) are still unjudged: judge every pair before submitting.")
    work_submit_mark(work=work, user=user, detail={"pairs": pairs.total})
    return work
