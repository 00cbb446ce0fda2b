"""ManualAssign: an assessor labels every answer of a topic against the topic's own nuggets.

Blinding is enforced here, not in the templates: these functions read only the
labels made in this piece of work (by their `work`, never by a name), only a
nugget set made or post-edited by a person, and never a run. The work writes
into a people's label source (MANUAL_ASSIGNER unless the organizer names
another), which no LLM job and no import can write into. Answers are known
to the pages by their position in an order shuffled once per assessor and
topic, so neither a run name nor an answer id reaches the browser.

Time: every label save credits the active gap since the assessor's previous
save (work_activity_record, capped by the idle limit) to the work and to that
label, so the time spent reading an answer before its first label counts for
that label, and an answer's time is the sum of its labels' seconds.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Subquery, Sum
from django.http import Http404

from assessor.models import Answer, AssessorWork, LabelSource, Sentence, Topic
from assessor.scoring.kept import scores_refresh_label
from assessor.work.judging import (
    JudgeError,
    Replayed,
    answer_at,
    answer_token,
    label_write,
    locked_open_work,
    operation_answer,
    operation_read_with,
    position_choose,
    shuffled,
)
from assessor.work.prepared import IdList, Prepared, id_list, instance_from_row, row_create
from assessor.work.services import (
    WorkError,
    person_source_claim,
    replicate_source_claim,
    work_give,
    work_submit_mark,
)
from assignment.kinds import ASSIGN_MANUAL, LABEL_FAMILY
from assignment.models import AssignmentLabel
from assignment.selectors import FAMILY
from nuggets.models import Nugget, NuggetSet

MANUAL_ASSIGNER = "manual"
ASSIGN_KINDS = (ASSIGN_MANUAL,)
LABELS = tuple(AssignmentLabel.Label.values)
# Nugget sets a person made: AutoNuggets and drafts are LLM output and never shown.
HUMAN_NUGGET_KINDS = (NuggetSet.Kind.MANUAL, NuggetSet.Kind.AUTO_EDIT)
NUGGETS_OPEN_WAIT = "waiting for the topic's nugget list to be submitted"


# --- Reads ------------------------------------------------------------------------


def answer_order(*, work: AssessorWork, topic_answers: list[int] | None = None) -> list[int]:
    """The work's answers in the assessor's order; `topic_answers`, the topic's answer ids when a query of the
    caller read them already (a label save's `nugget_list_check`)."""
    if work.items:
        # A work restricted to some items shows their answers in the order the items were given.
        return list(dict.fromkeys(answer_id for answer_id, _nugget_id in work.items))
    if topic_answers is None:
        topic_answers = [row[0] for row in _TOPIC_ANSWERS.rows(work.topic_id)]
    return shuffled(topic_answers, assessor_id=work.assessor_id, topic_id=work.topic_id)


# Unsorted (order_by()): shuffled() sorts them itself.
_TOPIC_ANSWERS = Prepared(lambda topic_id: Answer.objects.filter(topic_id=topic_id).order_by().values_list("pk"), str)


def item_nuggets(work: AssessorWork) -> dict[int, set[int]] | None:
    """A restricted work: answer id -> the nugget ids to label on it; None when every pair is to be labelled."""
    if not work.items:
        return None
    allowed: dict[int, set[int]] = {}
    for answer_id, nugget_id in work.items:
        allowed.setdefault(answer_id, set()).add(nugget_id)
    return allowed


def work_nugget_set(*, work: AssessorWork) -> NuggetSet:
    row = _WORK_NUGGET_SET.first(work.topic_id, work.nugget_set_name)
    if row is None:
        raise Http404("This work has no nugget list made by an assessor.")
    return instance_from_row(NuggetSet, _NUGGET_SET_FIELDS, row)


# The answer page's reads are written once (assessor.work.prepared), as the save's are: an assessor reads a page
# after every answer's labels, and these reads were a third of the page's CPU, mostly the building of their
# querysets. One set at most: a topic's sets have names of their own.
_NUGGET_SET_FIELDS = [field.attname for field in NuggetSet._meta.concrete_fields]
_WORK_NUGGET_SET = Prepared(
    lambda topic_id, name: (
        NuggetSet.objects.filter(topic_id=topic_id, name=name, kind__in=HUMAN_NUGGET_KINDS, form=NuggetSet.Form.FACTS)
        .order_by()
        .values_list(*_NUGGET_SET_FIELDS)
    ),
    str,
    str,
)
_PAGE_NUGGET_FIELDS = ["id", "nugget_set_id", "position", "text", "importance"]
_SET_NUGGETS = Prepared(
    lambda set_id: (
        Nugget.objects.filter(nugget_set_id=set_id).order_by("position", "id").values_list(*_PAGE_NUGGET_FIELDS)
    ),
    int,
)
_PAGE_SENTENCE_FIELDS = ["id", "index", "text"]
_ANSWER_SENTENCES = Prepared(
    lambda answer_id: Sentence.objects.filter(answer_id=answer_id).order_by("index").values_list(*_PAGE_SENTENCE_FIELDS),
    int,
)
# The labels made in this work on the list's nuggets: the only labels its pages read. By answer, how many; on
# one answer, which.
_OWN_LABEL_COUNTS = Prepared(
    lambda work_id, set_id: (
        AssignmentLabel.objects.filter(work_id=work_id, nugget__nugget_set_id=set_id)
        .order_by()
        .values("answer_id")
        .annotate(done=Count("id"))
        .values_list("answer_id", "done")
    ),
    int,
    int,
)
_OWN_ANSWER_LABELS = Prepared(
    lambda work_id, set_id, answer_id: (
        AssignmentLabel.objects.filter(work_id=work_id, nugget__nugget_set_id=set_id, answer_id=answer_id)
        .order_by()
        .values_list("nugget_id", "label")
    ),
    int,
    int,
    int,
)


@dataclass
class AssignPage:
    work: AssessorWork
    nugget_set: NuggetSet
    number: int  # 1-based position of the answer in the assessor's order
    total_answers: int
    sentences: list[Sentence]
    nuggets: list[Nugget]
    labels: dict[int, str]  # nugget id -> the assessor's label
    answers_done: int
    labels_done: int
    focus_nugget_id: int | None
    next_incomplete: int | None  # 1-based
    frozen: bool
    token: str = ""
    nuggets_open: bool = False  # the nugget list is still being edited: nothing can be labelled yet
    done_counts: list[int] = field(default_factory=list)
    # The answer's whole text, where its file gave no sentence split (read only then).
    unsplit_text: str = ""
    # Reopened because the nugget list changed: the nuggets to label again (id -> why), and the reason.
    redo: dict[int, str] = field(default_factory=dict)
    redo_why: str = ""
    labels_total: int = 0  # the labels the whole work needs

    @property
    def rows(self) -> list[tuple[int, Nugget, str, str]]:
        """(number, nugget, the assessor's label, why it is to be labelled again: "" when the whole work is open,
        "kept" for a nugget that did not change in a work reopened for the changed ones)."""
        return [
            (i + 1, n, self.labels.get(n.pk, ""), self.redo.get(n.pk, "kept") if self.redo else "")
            for i, n in enumerate(self.nuggets)
        ]

    @property
    def answer_complete(self) -> bool:
        return bool(self.nuggets) and len(self.labels) >= len(self.nuggets)

    @property
    def waiting(self) -> str:
        """Why nothing can be labelled yet (the frame's waiting state); empty when the work can be done."""
        return NUGGETS_OPEN_WAIT if self.nuggets_open else ""


def _label_counts(*, work: AssessorWork, nugget_set: NuggetSet) -> dict[int, int]:
    """Answer id -> how many labels this work made on it, on the list's nuggets."""
    return {answer_id: done for answer_id, done in _OWN_LABEL_COUNTS.rows(work.pk, nugget_set.pk)}


def assign_page_load(*, work: AssessorWork, number: int | None = None) -> AssignPage:
    """One answer (by its 1-based number; None: the first with labels missing) beside the nuggets."""
    nugget_set = work_nugget_set(work=work)
    order = answer_order(work=work)
    nuggets = [instance_from_row(Nugget, _PAGE_NUGGET_FIELDS, row) for row in _SET_NUGGETS.rows(nugget_set.pk)]
    counts = _label_counts(work=work, nugget_set=nugget_set)
    done_counts = [counts.get(answer_id, 0) for answer_id in order]
    if not order:
        raise Http404("This topic has no answers to judge.")
    allowed = item_nuggets(work)
    if allowed:
        # A nugget removed from the list since the items were chosen is no longer asked for.
        present = {nugget.pk for nugget in nuggets}
        allowed = {answer_id: chosen & present for answer_id, chosen in allowed.items()}
    needed = [len(allowed[answer_id]) for answer_id in order] if allowed else [len(nuggets)] * len(order)
    position = position_choose(done_counts=done_counts, needed=needed, number=number)
    if position is None:
        raise Http404("No such answer.")
    number = position.number
    answer_id = order[number - 1]
    if allowed:
        nuggets = [nugget for nugget in nuggets if nugget.pk in allowed[answer_id]]
    sentences = [
        instance_from_row(Sentence, _PAGE_SENTENCE_FIELDS, row) for row in _ANSWER_SENTENCES.rows(answer_id)
    ]
    unsplit_text = "" if sentences else Answer.objects.values_list("text", flat=True).get(pk=answer_id)
    labels = {nugget_id: label for nugget_id, label in _OWN_ANSWER_LABELS.rows(work.pk, nugget_set.pk, answer_id)}
    redo = redo_nuggets(work)
    focus = next((n.pk for n in nuggets if n.pk not in labels and (not redo or n.pk in redo)), None)
    focus = focus or next((n.pk for n in nuggets if n.pk not in labels), None)
    return AssignPage(
        work=work,
        nugget_set=nugget_set,
        number=number,
        total_answers=len(order),
        sentences=sentences,
        nuggets=nuggets,
        labels=labels,
        answers_done=sum(1 for done, need in zip(done_counts, needed, strict=True) if need and done >= need),
        labels_done=sum(done_counts),
        focus_nugget_id=focus,
        next_incomplete=position.next_incomplete,
        frozen=work.status == AssessorWork.Status.SUBMITTED or nugget_set.status == NuggetSet.Status.OPEN,
        token=answer_token(answer_id),
        nuggets_open=nugget_set.status == NuggetSet.Status.OPEN,
        done_counts=done_counts,
        unsplit_text=unsplit_text,
        redo=redo,
        redo_why=str(work.redo.get("why", "")),
        labels_total=sum(needed),
    )


def redo_nuggets(work: AssessorWork) -> dict[int, str]:
    """Reopened for some nuggets only: nugget id -> why it changed; empty when the whole work is open."""
    return {int(nugget_id): why for nugget_id, why in work.redo.get("nuggets", {}).items()}


# --- Writes -------------------------------------------------------------------------


@transaction.atomic
def assignment_label_save(
    *,
    work_id: int,
    user: User,
    number: int,
    nugget_id: int,
    label: str,
    previous: str,
    expected_version: int | None,
    token: str | None = None,
    op_id: str = "",
) -> AssignmentLabel | Replayed:
    """Save one label of the answer at `number`.

    `previous` is the label the page showed ("" for none): if another tab
    changed it meanwhile, the save is refused with the current label (409). A
    retry of a save whose answer was lost (the same `op_id`) is answered as
    the first time and applied once.
    """
    # The label source comes with the work (one query): a new label is stored under its name.
    work = locked_open_work(
        work_id=work_id, user=user, kinds=ASSIGN_KINDS, expected_version=expected_version, related=("source",)
    )
    if label not in LABELS:
        raise JudgeError(f"Unknown label {label!r}: one of {', '.join(LABELS)}.")
    if work.source is None:
        raise JudgeError("This work has no label source: an organizer has to give it again.")
    source = work.source
    answer_id = _labelled_answer(work=work, nugget_id=nugget_id, number=number, token=token, op_id=op_id)
    row = _OWN_LABEL.first(answer_id, nugget_id, work.pk)
    existing = instance_from_row(AssignmentLabel, _OWN_LABEL_FIELDS, row) if row else None
    saved = label_write(
        work=work,
        existing=existing,
        empty="",
        value=label,
        previous=previous,
        conflict=lambda current: (
            f"This label was changed in another tab (now {current or 'unlabelled'}): the page shows it now."
        ),
        item=f"answer {answer_id} nugget {nugget_id}",
        op_id=op_id,
        # One INSERT written once (every save of a new label makes it), as objects.create would write it.
        create=lambda seconds: row_create(
            AssignmentLabel,
            {
                "answer_id": answer_id,
                "nugget_id": nugget_id,
                "assigner": source.name,
                "assigner_kind": AssignmentLabel.AssignerKind.MANUAL,
                "source": source,
                "work": work,
                "label": label,
                "created_by": user,
                "seconds_spent": seconds,
            },
        ),
    )
    # The nugget list checked above is the work's: its name and topic are the work's.
    scores_refresh_label(
        work, family=FAMILY, columns=(work.nugget_set_name, source.name), topic=work.topic_id, answer=answer_id
    )
    return saved


def _labelled_answer(*, work: AssessorWork, nugget_id: int, number: int, token: str | None, op_id: str = "") -> int:
    """The answer at `number` that the label of `nugget_id` goes to; refused where this work may not label the
    nugget there (not in its submitted list, not reopened, not in a restricted work's items)."""
    topic_answers = nugget_list_check(work=work, nugget_id=nugget_id, op_id=op_id)
    redo = redo_nuggets(work)
    if redo and nugget_id not in redo:
        raise JudgeError("Only the nuggets that changed are reopened: this label stays as it was submitted.")
    answer_id = answer_at(order=answer_order(work=work, topic_answers=topic_answers), number=number, token=token)
    allowed = item_nuggets(work)
    if allowed is not None and nugget_id not in allowed[answer_id]:
        raise JudgeError("This nugget is not to be labelled on this answer in this work.")
    return answer_id


def nugget_list_check(*, work: AssessorWork, nugget_id: int, op_id: str = "") -> list[int]:
    """Refuse a label on a nugget that is not in the work's submitted nugget list; the topic's answer ids.

    One query when the nugget is there (every save of a working page), which
    also reads whether the save's operation id (`op_id`) was applied already,
    for `operation_replayed` (the work is locked by then), and the topic's
    answer ids, for `answer_order`. The refusals read the list again to say
    what is wrong: no list (404), a list still open (409), a nugget not in it.
    """
    row = _NUGGET_LIST_STATUS.first(nugget_id, work.topic_id, work.nugget_set_name, work.pk, op_id)
    found = row[0] if row else None
    if row is not None and op_id:
        operation_read_with(work=work, op_id=op_id, answer=row[1])
    status = found if found is not None else work_nugget_set(work=work).status
    if status == NuggetSet.Status.OPEN:
        raise JudgeError("The nugget list of this topic is not submitted yet: submit it first.", status=409)
    if row is None:
        raise JudgeError("No such nugget in this topic's list.")
    return id_list(row[2])


_NUGGET_LIST_STATUS = Prepared(
    lambda nugget_id, topic_id, name, work_id, op_id: (
        Nugget.objects.filter(
            pk=nugget_id,
            nugget_set__topic_id=topic_id,
            nugget_set__name=name,
            nugget_set__kind__in=HUMAN_NUGGET_KINDS,
            nugget_set__form=NuggetSet.Form.FACTS,
        )
        .annotate(
            operation=Subquery(operation_answer(work_id, op_id)),
            answers=Subquery(
                Answer.objects.filter(topic_id=topic_id)
                .order_by()
                .values("topic_id")
                .annotate(ids=IdList("pk"))
                .values("ids")
            ),
        )
        .order_by()
        .values_list("nugget_set__status", "operation", "answers")[:1]
    ),
    int,
    str,
    str,
    int,
    str,
)
_OWN_LABEL_FIELDS = ["id", "label", "seconds_spent"]
_OWN_LABEL = Prepared(
    lambda answer_id, nugget_id, work_id: (
        AssignmentLabel.objects.select_for_update()
        .filter(answer_id=answer_id, nugget_id=nugget_id, work_id=work_id)
        .order_by()
        .values_list(*_OWN_LABEL_FIELDS)[:1]
    ),
    int,
    int,
    int,
)


@transaction.atomic
def assign_submit(*, work_id: int, user: User, expected_version: int | None) -> AssessorWork:
    work = locked_open_work(work_id=work_id, user=user, kinds=ASSIGN_KINDS, expected_version=expected_version)
    nugget_set = work_nugget_set(work=work)
    order = answer_order(work=work)
    if work.items:
        present = set(nugget_set.nuggets.values_list("pk", flat=True))
        needed = sum(1 for _answer_id, nugget_id in work.items if nugget_id in present)
    else:
        needed = len(order) * nugget_set.nuggets.count()
    counts = _label_counts(work=work, nugget_set=nugget_set)
    done = sum(counts.get(answer_id, 0) for answer_id in order)
    if done < needed:
        raise WorkError(f"{needed - done} label(s) are still missing: every answer needs a label for every nugget.")
    work_submit_mark(work=work, user=user, detail={"labels": done})
    return work


@transaction.atomic
def assign_work_give(
    *, topic: Topic, assessor: User, by: User | None, nugget_set_name: str = "", assigner_name: str = ""
) -> AssessorWork:
    """Give a topic's ManualAssign; the nuggets are the named set, or the topic's only set made by a person.

    The labels go into the people's source `assigner_name` (MANUAL_ASSIGNER by
    default). The work starts empty: labels of other sources on the same
    answers (imported, an LLM's) are never shown to it.
    """
    candidates = NuggetSet.objects.filter(topic=topic, kind__in=HUMAN_NUGGET_KINDS, form=NuggetSet.Form.FACTS)
    if nugget_set_name:
        candidates = candidates.filter(name=nugget_set_name)
    sets = list(candidates.order_by("name")[:3])
    if not sets:
        wanted = f" named {nugget_set_name!r}" if nugget_set_name else ""
        raise WorkError(f"Topic {topic.pk} has no nugget list{wanted} made by an assessor to assign.")
    if len(sets) > 1:
        names = ", ".join(s.name for s in sets)
        raise WorkError(f"Topic {topic.pk} has several nugget lists ({names}): name the one to assign.")
    source = person_source_claim(family=LABEL_FAMILY, name=assigner_name or MANUAL_ASSIGNER, by=by)
    held = AssignmentLabel.objects.filter(source=source, nugget__nugget_set=sets[0]).exists()
    if held:
        raise WorkError(
            f"The assigner {source.name!r} already has labels on topic {topic.pk}'s nuggets from other work: "
            "name another assigner for this work."
        )
    return work_give(
        topic=topic,
        assessor=assessor,
        kind=ASSIGN_MANUAL,
        by=by,
        nugget_set_name=sets[0].name,
        source=source,
    )


@transaction.atomic
def assign_replicate_give(
    *, topic: Topic, assessor: User, by: User | None, of_assigner: str, assigner_name: str
) -> AssessorWork:
    """Give a second assessor an independent replicate of a topic's ManualAssign under `of_assigner`.

    The same nugget list and answers; the labels go into the people's source
    `assigner_name`, marked as a replicate of the first. Blind by provenance:
    the pages read only the labels of their own work.
    """
    first = (
        AssessorWork.objects.filter(
            topic=topic,
            kind=ASSIGN_MANUAL,
            source__family=LABEL_FAMILY,
            source__name=of_assigner,
        )
        .select_related("source")
        .first()
    )
    if first is None or first.source is None:
        return _imported_replicate_give(
            topic=topic, assessor=assessor, by=by, of_assigner=of_assigner, name=assigner_name
        )
    source = replicate_source_claim(family=LABEL_FAMILY, name=assigner_name, of=first.source, by=by)
    return work_give(
        topic=topic,
        assessor=assessor,
        kind=ASSIGN_MANUAL,
        by=by,
        nugget_set_name=first.nugget_set_name,
        source=source,
        blind_to=[first.source],
    )


def _imported_replicate_give(
    *, topic: Topic, assessor: User, by: User | None, of_assigner: str, name: str
) -> AssessorWork:
    """A replicate of people's nugget assignment imported from a file (NIST's ManualAssign): the same nugget
    list and answers, assigned again by a second assessor, blind to the file's labels."""
    imported = AssignmentLabel.objects.filter(
        assigner=of_assigner, answer__topic=topic, source__kind=LabelSource.Kind.FILE
    )
    kinds = set(imported.values_list("assigner_kind", flat=True))
    if not kinds:
        raise WorkError(f"Topic {topic.pk} has no ManualAssign work under the assigner {of_assigner!r} to replicate.")
    if kinds != {AssignmentLabel.AssignerKind.MANUAL}:
        raise WorkError(
            f"The imported {of_assigner!r} labels are not people's assignment ({', '.join(sorted(kinds))}): "
            "only a human condition has a second assessor."
        )
    nugget_sets = sorted(set(imported.values_list("nugget__nugget_set__name", flat=True)))
    if len(nugget_sets) != 1:
        raise WorkError(
            f"The imported {of_assigner!r} labels of topic {topic.pk} are on {len(nugget_sets)} nugget lists "
            f"({', '.join(nugget_sets)}): a replicate assigns one."
        )
    first_source = LabelSource.objects.get(family=LABEL_FAMILY, name=of_assigner)
    source = replicate_source_claim(family=LABEL_FAMILY, name=name, of=first_source, by=by, imported_people=True)
    return work_give(
        topic=topic, assessor=assessor, kind=ASSIGN_MANUAL, by=by, nugget_set_name=nugget_sets[0], source=source,
        blind_to=[first_source],
    )  # fmt: skip


# --- The organizer's view --------------------------------------------------------------


@dataclass
class AssignProgress:
    work: AssessorWork
    answers: int
    nuggets: int
    labels_done: int
    seconds: float  # the labels' seconds
    # Labels the organizer's page fills in for the template.
    time_label: str = ""
    per_answer_label: str = ""

    @property
    def labels_total(self) -> int:
        return len(self.work.items) if self.work.items else self.answers * self.nuggets

    @property
    def seconds_per_answer(self) -> float | None:
        """Seconds per label times labels per answer: fair to a topic still in progress."""
        return self.seconds / self.labels_done * self.nuggets if self.labels_done else None

    @property
    def done(self) -> int:
        return self.labels_done

    @property
    def total(self) -> int:
        return self.labels_total


def human_lists() -> list[tuple[str, int]]:
    """The names of the nugget lists people made (or post-edited), each with the number of topics that have one."""
    rows = (
        NuggetSet.objects.filter(kind__in=HUMAN_NUGGET_KINDS, form=NuggetSet.Form.FACTS)
        .values("name")
        .annotate(topics=Count("topic", distinct=True))
        .order_by("name")
    )
    return [(row["name"], row["topics"]) for row in rows]


def assign_waiting(works: Sequence[AssessorWork]) -> dict[int, str]:
    """The ManualAssign works whose nugget list is still open (or not made yet): nothing to label until it is
    submitted. One query."""
    topic_ids = {work.topic_id for work in works}
    submitted = set(
        NuggetSet.objects.filter(topic_id__in=topic_ids)
        .exclude(status=NuggetSet.Status.OPEN)
        .values_list("topic_id", "name")
    )
    return {work.pk: NUGGETS_OPEN_WAIT for work in works if (work.topic_id, work.nugget_set_name) not in submitted}


def assign_progress(works: Sequence[AssessorWork] | None = None) -> list[AssignProgress]:
    """Every ManualAssign work (or those given) with its labels done and seconds, in a fixed number of queries."""
    if works is None:
        works = list(AssessorWork.objects.filter(kind=ASSIGN_MANUAL).select_related("assessor", "topic"))
    topic_ids = [w.topic_id for w in works]
    answers = dict(
        Answer.objects.filter(topic_id__in=topic_ids)
        .values("topic_id")
        .annotate(n=Count("id"))
        .values_list("topic_id", "n")
    )
    nugget_counts = {
        (row["nugget_set__topic_id"], row["nugget_set__name"]): row["n"]
        for row in Nugget.objects.filter(nugget_set__topic_id__in=topic_ids)
        .values("nugget_set__topic_id", "nugget_set__name")
        .annotate(n=Count("id"))
    }
    labels = {
        row["work_id"]: (row["n"], row["s"] or 0.0)
        for row in AssignmentLabel.objects.filter(work__in=works)
        .values("work_id")
        .annotate(n=Count("id"), s=Sum("seconds_spent"))
    }
    result = []
    for work in works:
        key = (work.topic_id, work.nugget_set_name)
        done, seconds = labels.get(work.pk, (0, 0.0))
        result.append(
            AssignProgress(
                work=work,
                answers=answers.get(work.topic_id, 0),
                nuggets=nugget_counts.get(key, 0),
                labels_done=done,
                seconds=seconds,
            )
        )
    return result


@dataclass
class AnswerTime:
    number: int  # the position the assessor saw it at
    run_id: str  # organizers may see runs
    labels_done: int
    seconds: float
    # Labels the organizer's page fills in for the template.
    time_label: str = ""


def assign_work_detail(*, work: AssessorWork) -> list[AnswerTime]:
    """Each answer of a ManualAssign work, in the assessor's order, with its labels and seconds (3 queries)."""
    order = answer_order(work=work)
    runs = dict(Answer.objects.filter(pk__in=order).values_list("pk", "run__run_id"))
    stats = {
        row["answer_id"]: (row["n"], row["s"] or 0.0)
        for row in AssignmentLabel.objects.filter(
            answer_id__in=order,
            work=work,
            nugget__nugget_set__topic_id=work.topic_id,
            nugget__nugget_set__name=work.nugget_set_name,
        )
        .values("answer_id")
        .annotate(n=Count("id"), s=Sum("seconds_spent"))
    }
    return [
        AnswerTime(
            number=i,
            run_id=runs[answer_id],
            labels_done=stats.get(answer_id, (0, 0.0))[0],
            seconds=stats.get(answer_id, (0, 0.0))[1],
        )
        for i, answer_id in enumerate(order, start=1)
    ]
