"""The judging core ManualAssign and support judging share.

Both show a topic's answers one at a time in an order shuffled once per
assessor and topic, know an answer on the page by its position and an opaque
token (never its id or run), save one label at a time against the version
of the work and the label the page showed, credit the active time to the
label, and refuse with a message a person can act on.
"""

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Model, QuerySet
from django.utils import timezone

from assessor.models import AssessorWork, LabelSource, WorkOperation
from assessor.work.access import WorkNotFound, assessor_work, in_campaigns_of, work_campaign_open_check
from assessor.work.prepared import Prepared, instance_from_row, row_insert, row_update
from assessor.work.services import work_activity_record, work_reopen_mark


class JudgeError(Exception):
    """A refused save; `status` is the HTTP status a page answers with (409: reload, 400: bad request)."""

    def __init__(self, message: str, *, status: int = 400, current: str | int | None = None):
        self.message = message
        self.status = status
        self.current = current
        super().__init__(message)


# --- The order of answers: pure ------------------------------------------------


def order_seed(*, assessor_id: int, topic_id: str) -> int:
    """A seed fixed per assessor and topic (stable across processes, unlike hash())."""
    digest = hashlib.sha256(f"{assessor_id}:{topic_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def shuffled(ids: Sequence[int], *, assessor_id: int, topic_id: str) -> list[int]:
    """The ids in an order that depends only on the set of ids, the assessor and the topic."""
    order = sorted(ids)
    random.Random(order_seed(assessor_id=assessor_id, topic_id=topic_id)).shuffle(order)
    return order


def first_incomplete(done_counts: Sequence[int], *, needed: int, start: int = 0) -> int | None:
    """Index of the first item from `start` on (wrapping around) with fewer than `needed` labels."""
    size = len(done_counts)
    for step in range(size):
        index = (start + step) % size
        if done_counts[index] < needed:
            return index
    return None


def answer_token(answer_id: int) -> str:
    """An opaque name of an answer for the page: a save names the answer it was made on.

    Positions shift if a run is imported while the assessor works; the token
    lets a save made on the old order be refused instead of landing on
    another answer. Keyed by SECRET_KEY, it tells nothing about the answer's
    id (and so nothing about its run's import order).
    """
    return hashlib.sha256(f"{settings.SECRET_KEY}:judge-answer:{answer_id}".encode()).hexdigest()[:20]


def answer_at(*, order: Sequence[int], number: int, token: str | None) -> int:
    """The answer id at a 1-based position, checked against the page's token when it sent one."""
    if not 1 <= number <= len(order):
        raise JudgeError("No such answer.")
    answer_id = order[number - 1]
    if token and token != answer_token(answer_id):
        raise JudgeError("The topic's answers changed since the page was loaded: reload it.", status=409)
    return answer_id


@dataclass(frozen=True)
class Position:
    """Where a page stands in the assessor's order of answers."""

    number: int  # 1-based
    next_incomplete: int | None  # 1-based: the next answer from here on with labels missing


def position_choose(*, done_counts: Sequence[int], needed: Sequence[int], number: int | None) -> Position | None:
    """The answer to show (`number`, or the first with labels missing) and the next one to go to.

    None when `number` is outside the order.
    """
    complete = [1 if done >= need else 0 for done, need in zip(done_counts, needed, strict=False)]
    if number is None:
        index = first_incomplete(complete, needed=1)
        number = (index if index is not None else 0) + 1
    if not 1 <= number <= len(done_counts):
        return None
    following = first_incomplete(complete, needed=1, start=number % len(done_counts))
    return Position(number=number, next_incomplete=following + 1 if following is not None else None)


# --- Queries written once -------------------------------------------------------------

_WORK_FIELDS = [field.attname for field in AssessorWork._meta.concrete_fields]
_LOCKED_WORK: dict[tuple[str, ...], Prepared] = {}


def _locked_work_query(kinds: tuple[str, ...]) -> Prepared:
    """The access rule of `assessor_work` (this assessor's work, of these kinds, in a campaign they belong to),
    locked, with its source's name and its campaign's state, in one prepared query."""
    if kinds not in _LOCKED_WORK:
        _LOCKED_WORK[kinds] = Prepared(
            lambda work_id, assessor_id: (
                in_campaigns_of(
                    AssessorWork.objects.filter(pk=work_id, assessor_id=assessor_id, kind__in=list(kinds)),
                    assessor_id,
                )
                .select_for_update(of=("self",))
                .values_list(*_WORK_FIELDS, "source__name", "topic__campaign__closed_at")
            ),
            int,
            int,
        )
    return _LOCKED_WORK[kinds]


def locked_work_with_source(*, work_id: int, user: User, kinds: Sequence[str]) -> AssessorWork:
    """`assessor_work(..., lock=True, related=("source",))` for a label save: the work with its source's id
    and name only (`work.source` is None without one)."""
    row = _locked_work_query(tuple(kinds)).first(work_id, user.pk)
    if row is None:
        raise WorkNotFound("No such work of yours.")
    *values, source_name, campaign_closed_at = row
    work = instance_from_row(AssessorWork, _WORK_FIELDS, values)
    work_campaign_open_check(topic_id=work.topic_id, closed_at=campaign_closed_at)
    if work.source_id is not None:
        work.source = instance_from_row(LabelSource, ["id", "name"], [work.source_id, source_name])
    return work


# --- Writes ------------------------------------------------------------------------


def locked_open_work(
    *,
    work_id: int,
    user: User,
    kinds: Sequence[str],
    expected_version: int | None,
    related: Sequence[str] = ("topic",),
) -> AssessorWork:
    """The assessor's work (with `related` read in the same query), locked, checked open and at the version
    the page was loaded at."""
    if tuple(related) == ("source",):
        work = locked_work_with_source(work_id=work_id, user=user, kinds=kinds)
    else:
        work = assessor_work(work_id=work_id, user=user, kinds=kinds, lock=True, related=related)
    if work.status == AssessorWork.Status.SUBMITTED:
        raise JudgeError("This topic is submitted and frozen: an organizer can reopen it.", status=409)
    if expected_version is None:
        # A save that does not say which version of the work it was made on could land after a reopening.
        raise JudgeError(
            "This save does not say which version of the work it was made on: reload the page.", status=409
        )
    if expected_version != work.version:
        raise JudgeError("This topic was submitted or reopened since the page was loaded: reload it.", status=409)
    return work


class JudgedLabel(Protocol):
    """A label row both apps store: its value and the seconds the person spent on it."""

    # Any: each app's label field has its own type (a string, a small integer).
    pk: Any
    label: Any
    seconds_spent: Any
    work: Any


Label = TypeVar("Label", bound=JudgedLabel)


def operation_answer(work_id: Any, op_id: Any) -> QuerySet[WorkOperation, Any]:
    """What the first attempt of operation `op_id` on the work answered (no row if it was not applied): read on its
    own, or as a subquery of a read a save makes anyway once the work is locked (`operation_read_with`)."""
    return WorkOperation.objects.filter(work_id=work_id, op_id=op_id).values("answer")[:1]


_OPERATION_ANSWER = Prepared(operation_answer, int, str)


# On the locked work: (operation id, what its first attempt answered or None), read by a query the save makes anyway.
_OPERATION_READ = "_operation_read"


def operation_read_with(*, work: AssessorWork, op_id: str, answer: dict | None) -> None:
    """Note what a save's own read found of its operation id (`WorkOperation.answer`, None if not applied):
    `operation_replayed` then asks nothing more. The read must come after `work` was locked, in a statement of
    its own (a snapshot taken before the lock was granted could miss a first attempt that held it)."""
    setattr(work, _OPERATION_READ, (op_id, answer))


def operation_replayed(*, work: AssessorWork, op_id: str, request: list) -> dict | None:
    """What the first attempt of an operation id answered, if this work already applied it; None if it is new.

    Every save an assessor's page sends with an id goes through here (labels,
    nugget edits): a retry whose answer was lost is applied once. The retry
    must be the same request; an id reused for another one is refused. Call
    inside the transaction that locked `work`.
    """
    if not op_id:
        return None
    read = getattr(work, _OPERATION_READ, None)
    if read is not None and read[0] == op_id:
        answer = read[1]
    else:
        row = _OPERATION_ANSWER.first(work.pk, op_id)
        answer = row[0] if row else None
    if answer is None:
        return None
    if answer.get("request") != request:
        raise JudgeError("This operation id was already used for another save: reload the page.")
    return answer


def operation_record(*, work: AssessorWork, op_id: str, request: list, answer: dict) -> None:
    """Record an applied operation (in its transaction), so that its retry is answered with `answer`."""
    if op_id:
        row_insert(
            WorkOperation,
            {"work": work.pk, "op_id": op_id, "answer": {**answer, "request": request}, "at": timezone.now()},
        )


@dataclass(frozen=True)
class Replayed:
    """A save already applied (the same operation id): what its first attempt stored."""

    label: object
    work: AssessorWork | None = None  # the work, locked, as the replay found it


def label_write(
    *,
    work: AssessorWork,
    existing: Label | None,
    empty: object,
    value: object,
    previous: object,
    conflict: Callable[[Any], str],
    create: Callable[[float], Label],
    item: str,
    op_id: str = "",
) -> Label | Replayed:
    """Store `value` over the label the page showed (`previous`; `empty` for none), crediting the time.

    A save carrying an operation id (`op_id`) already applied to this work is a
    replay of a save whose answer was lost: it writes nothing and is answered
    with what the first attempt stored, even if the label changed since. The
    replay must be the same save (the same `item`, a name of what is labelled,
    and value); an id reused for another save is refused.
    Without an id, saving the value already stored is a success that changes
    nothing. A stored label other than `previous` was changed in another tab:
    refused (409) with the current label, which `conflict` describes. Call
    inside the transaction that locked `work` and `existing`.
    """
    first = operation_replayed(work=work, op_id=op_id, request=[item, value])
    if first is not None:
        return Replayed(label=first.get("label"), work=work)
    current = existing.label if existing is not None else empty
    if existing is not None and current == value:
        saved = existing
    elif current != previous:
        raise JudgeError(conflict(current), status=409, current=current)  # type: ignore[arg-type]
    elif existing is None:
        saved = create(work_activity_record(work=work))
    else:
        existing.label = value
        existing.seconds_spent = (existing.seconds_spent or 0) + work_activity_record(work=work)
        row_update(cast(Model, existing), ["label", "seconds_spent"])
        saved = existing
    operation_record(work=work, op_id=op_id, request=[item, value], answer={"label": saved.label})
    # The locked work, its time credited: the answer reports its state without reading it again.
    saved.work = work
    return saved


@transaction.atomic
def judge_work_reopen(*, work_id: int, by: User, kinds: Sequence[str], reason: str = "") -> AssessorWork:
    work = AssessorWork.objects.select_for_update().get(pk=work_id, kind__in=kinds)
    work_reopen_mark(work=work, by=by, reason=reason)
    return work


# --- The organizer's totals --------------------------------------------------------------


@dataclass
class AssessorTotal:
    assessor: str
    topics: int = 0
    submitted: int = 0
    done: int = 0
    total: int = 0
    seconds: float = 0.0
    shown: int = 0
    changed: int = 0

    @property
    def change_rate(self) -> float | None:
        return self.changed / self.shown if self.shown else None


def assessor_totals(rows: Sequence) -> list[AssessorTotal]:
    """Progress rows (one per work, with done, total, seconds) summed per assessor: pure."""
    totals: dict[str, AssessorTotal] = {}
    for row in rows:
        name = str(row.work.assessor)
        total = totals.setdefault(name, AssessorTotal(assessor=name))
        total.topics += 1
        total.submitted += row.work.status == AssessorWork.Status.SUBMITTED
        total.done += row.done
        total.total += row.total
        total.seconds += row.seconds
        total.shown += getattr(row, "shown", 0)
        total.changed += getattr(row, "changed", 0)
    return [totals[name] for name in sorted(totals)]
