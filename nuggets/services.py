"""Writes of the nugget workspace: every operation an assessor makes on a topic's nuggets.

Each operation runs in one transaction, holding the work and nugget set rows
locked, and
- refuses a stale version (two tabs never overwrite each other silently),
- refuses a frozen (submitted) list,
- recognises a retried request by its operation id and applies it once,
- logs before and after of the nuggets it touched, and the list order, in
  NuggetEdit (that log is also what undo replays backwards),
- credits the assessor's active time (assessor.work.services) and bumps the version.

The query count of an operation does not grow with the list: rows are read
once, positions renumbered with one bulk update, lineage written in bulk.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from assessor.models import AssessorWork, Qrel, Topic
from assessor.scoring.kept import scores_refresh_work
from assessor.work.access import WorkNotFound, assessor_work
from assessor.work.services import (
    WorkError,
    person_source_claim,
    work_activity_record,
    work_give,
    work_reopen_mark,
    work_submit_mark,
)
from nuggets import workspace as rules
from nuggets.dependents import Change, Dependent, list_changes, nugget_list_changed, nuggets_delete, set_dependents
from nuggets.kinds import LABEL_FAMILY, NUGGET_KINDS, NUGGETS_AUTO_EDIT, NUGGETS_MANUAL
from nuggets.models import Nugget, NuggetEdit, NuggetSet

NIST_SOURCE = "nist"
Through = Nugget.derived_from.through

# Operations undo may take back; submit and reopen are decisions, not edits.
UNDOABLE = ("add", "edit", "importance", "source", "delete", "move", "merge", "split")

CONDITION_KINDS: dict[str, str] = {
    NuggetSet.Kind.MANUAL: NUGGETS_MANUAL,
    NuggetSet.Kind.AUTO_EDIT: NUGGETS_AUTO_EDIT,
}


def nugget_cap(kind: str) -> int:
    """ManualNuggets: the protocol's 20. Post-editing starts from 30 drafts, so the list may hold 30 while editing."""
    return NuggetSet.MAX_NUGGETS if kind == NuggetSet.Kind.MANUAL else NuggetSet.MAX_DRAFTS


def submit_cap(kind: str) -> int:
    """A submitted list holds at most 20 nuggets in both conditions (NIST's post-edited lists have 7 to 20)."""
    return NuggetSet.MAX_NUGGETS


# --- Giving work ------------------------------------------------------------


@transaction.atomic
def nugget_work_give(
    *,
    topic: Topic,
    assessor: User,
    condition: str,
    by: User | None,
    name: str = "",
    drafts_name: str = "",
) -> AssessorWork:
    """Give a topic to an assessor for ManualNuggets or AutoNuggets+Edits, and open its nugget set.

    Post-editing starts from a copy of the drafts, each one `kept` and derived
    from its draft; the drafts are the set named `drafts_name`, or the topic's
    newest draft set.
    """
    if condition not in CONDITION_KINDS:
        raise WorkError(f"Unknown condition {condition!r}: choose manual or auto_edit.")
    name = name or condition
    if NuggetSet.objects.filter(topic=topic, name=name).exists():
        raise WorkError(f"Topic {topic.pk} already has a nugget set named {name!r}: choose another name.")
    drafts = None
    if condition == NuggetSet.Kind.AUTO_EDIT:
        candidates = NuggetSet.objects.filter(topic=topic, kind=NuggetSet.Kind.DRAFT)
        if drafts_name:
            candidates = candidates.filter(name=drafts_name)
        drafts = candidates.order_by("-created_at", "-id").first()
        if drafts is None:
            wanted = f"named {drafts_name!r} " if drafts_name else ""
            raise WorkError(
                f"Topic {topic.pk} has no draft nuggets {wanted}to post-edit: import draft nuggets for it "
                "or generate them with an AutoNuggets job first."
            )
    source = person_source_claim(family=LABEL_FAMILY, name=name, by=by)
    work = work_give(
        topic=topic, assessor=assessor, kind=CONDITION_KINDS[condition], by=by, nugget_set_name=name, source=source
    )
    nugget_set = NuggetSet.objects.create(
        topic=topic,
        kind=condition,
        name=name,
        source=source,
        drafts=drafts,
        status=NuggetSet.Status.OPEN,
        created_by=assessor,
        seconds_spent=0,
    )
    if drafts is not None:
        draft_nuggets = list(drafts.nuggets.order_by("position", "id"))
        copies = Nugget.objects.bulk_create(
            [
                Nugget(
                    nugget_set=nugget_set,
                    position=index,
                    text=draft.text,
                    importance="",  # drafts reach the assessor without importance
                    origin=Nugget.Origin.KEPT,
                    created_by=assessor,
                    seconds_spent=0,
                )
                for index, draft in enumerate(draft_nuggets)
            ]
        )
        Through.objects.bulk_create(
            [Through(from_nugget_id=copy.pk, to_nugget_id=draft.pk) for copy, draft in zip(copies, draft_nuggets, strict=False)]
        )
    return work


# --- The editing context ----------------------------------------------------


@dataclass
class OpResult:
    work: AssessorWork
    nugget_set: NuggetSet
    edit: NuggetEdit | None
    # True when the operation id was seen before: nothing was applied again.
    replayed: bool = False
    # The nugget the assessor's cursor should land on after the operation.
    focus_id: int | None = None


@dataclass
class _Context:
    work: AssessorWork
    nugget_set: NuggetSet
    user: User
    nuggets: list[Nugget]
    derived: dict[int, list[int]]
    draft_texts: dict[int, str]
    now: datetime
    touched: set[int] = field(default_factory=set)

    @property
    def order(self) -> list[int]:
        return [nugget.pk for nugget in self.nuggets]

    @property
    def is_post_edit(self) -> bool:
        return self.nugget_set.kind == NuggetSet.Kind.AUTO_EDIT

    def nugget(self, nugget_id: int | str | None) -> Nugget:
        try:
            wanted = int(nugget_id)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise rules.InvalidOperation("Choose a nugget first.") from None
        for nugget in self.nuggets:
            if nugget.pk == wanted:
                return nugget
        raise rules.InvalidOperation(
            "That nugget is no longer in the list (it was deleted or merged): reload the list."
        )

    def snapshot(self, nugget: Nugget) -> dict:
        return {
            "id": nugget.pk,
            "position": nugget.position,
            "text": nugget.text,
            "importance": nugget.importance,
            "origin": nugget.origin,
            "derived_from": list(self.derived.get(nugget.pk, [])),
            "source_segment": nugget.source_segment_id,
            "created_at": nugget.created_at.isoformat() if nugget.created_at else None,
            "seconds_spent": nugget.seconds_spent,
        }


def _context_open(
    *, work_id: int, user: User, expected_version: int | None, op_id: str, operation: str
) -> tuple[_Context | None, OpResult | None]:
    """Lock the rows and run the checks every operation shares; a replay returns its result at once.

    A replay is the same operation on the same version as the first attempt; an operation id reused
    for anything else is refused, never silently answered.
    """
    try:
        work = assessor_work(work_id=work_id, user=user, kinds=NUGGET_KINDS, lock=True)
    except WorkNotFound:
        raise rules.InvalidOperation("This topic is not given to you.") from None
    try:
        nugget_set = NuggetSet.objects.select_for_update().get(topic_id=work.topic_id, name=work.nugget_set_name)
    except NuggetSet.DoesNotExist:
        raise rules.InvalidOperation("This work has no nugget set to edit; ask an organizer.") from None
    if expected_version is None:
        raise rules.VersionConflict(expected=None, current=nugget_set.version)
    first = NuggetEdit.objects.filter(nugget_set=nugget_set, op_id=op_id).first() if op_id else None
    if first is not None:
        if first.operation != operation or first.set_version != expected_version + 1:
            raise rules.InvalidOperation("This operation id was already used for another change: reload the page.")
        return None, OpResult(work=work, nugget_set=nugget_set, edit=None, replayed=True)
    if nugget_set.status == NuggetSet.Status.SUBMITTED:
        raise rules.SetFrozen("This list is submitted and frozen; an organizer can reopen it.")
    if expected_version != nugget_set.version:
        raise rules.VersionConflict(expected=expected_version, current=nugget_set.version)
    nuggets = list(nugget_set.nuggets.order_by("position", "id").prefetch_related("derived_from"))
    derived = {}
    draft_texts: dict[int, str] = {}
    for nugget in nuggets:
        sources = sorted(nugget.derived_from.all(), key=lambda draft: (draft.position, draft.pk))
        derived[nugget.pk] = [draft.pk for draft in sources]
        draft_texts.update((draft.pk, draft.text) for draft in sources)
    context = _Context(
        work=work,
        nugget_set=nugget_set,
        user=user,
        nuggets=nuggets,
        derived=derived,
        draft_texts=draft_texts,
        now=timezone.now(),
    )
    return context, None


def _renumber(context: _Context, nuggets: list[Nugget]) -> None:
    """Make `nuggets` the list, positions 0..n-1, writing only the rows whose position changed."""
    changed = []
    for index, nugget in enumerate(nuggets):
        if nugget.position != index:
            nugget.position = index
            if nugget.pk is not None:
                changed.append(nugget)
    if changed:
        Nugget.objects.bulk_update(changed, ["position"])
    context.nuggets = nuggets


def _derived_write(context: _Context, links: dict[int, list[int]]) -> None:
    rows = [
        Through(from_nugget_id=nugget_id, to_nugget_id=draft_id)
        for nugget_id, drafts in links.items()
        for draft_id in drafts
    ]
    if rows:
        Through.objects.bulk_create(rows)
    context.derived.update(links)


def _nuggets_delete(context: _Context, ids: Sequence[int]) -> None:
    # Labels on a removed nugget (the list was reopened after labelling) are retired, not lost.
    nuggets_delete(ids, reason=Change.REMOVED)
    for nugget_id in ids:
        context.derived.pop(nugget_id, None)


def _new_nugget(context: _Context, *, text: str, importance: str, origin: str, source_segment_id=None) -> Nugget:
    return Nugget(
        nugget_set=context.nugget_set,
        position=0,
        text=text,
        importance=importance,
        origin=origin if context.is_post_edit else "",
        created_by=context.user,
        created_at=context.now,
        seconds_spent=0,
        source_segment_id=source_segment_id,
    )


def _finish(
    context: _Context,
    *,
    operation: str,
    op_id: str,
    before: list[dict],
    before_order: list[int],
    after_ids: Sequence[int],
    focus_id: int | None,
    extra: dict | None = None,
) -> OpResult:
    """Credit time, bump the version, and log the operation with before and after."""
    added = work_activity_record(work=context.work, now=context.now)
    by_id = {nugget.pk: nugget for nugget in context.nuggets}
    if added and after_ids:
        # The time of an operation belongs to the nuggets it produced: their provenance.
        spent = Coalesce(F("seconds_spent"), Value(0.0)) + added
        Nugget.objects.filter(pk__in=list(after_ids)).update(seconds_spent=spent)
        for nugget_id in after_ids:
            if nugget_id in by_id:
                by_id[nugget_id].seconds_spent = (by_id[nugget_id].seconds_spent or 0) + added
    nugget_set = context.nugget_set
    nugget_set.version += 1
    nugget_set.seconds_spent = context.work.active_seconds
    NuggetSet.objects.filter(pk=nugget_set.pk).update(
        version=nugget_set.version, seconds_spent=nugget_set.seconds_spent
    )
    after = {"nuggets": [context.snapshot(by_id[i]) for i in after_ids if i in by_id], "order": context.order}
    after.update(extra or {})
    edit = NuggetEdit.objects.create(
        nugget_set=nugget_set,
        user=context.user,
        operation=operation,
        before={"nuggets": before, "order": before_order},
        after=after,
        set_version=nugget_set.version,
        op_id=op_id,
    )
    return OpResult(work=context.work, nugget_set=nugget_set, edit=edit, focus_id=focus_id)


# --- Operations -------------------------------------------------------------


def _importance_clean(importance: str | None) -> str:
    importance = (importance or "").strip()
    if importance not in ("", Nugget.Importance.VITAL, Nugget.Importance.OKAY):
        raise rules.InvalidOperation(f"Importance is vital or okay, not {importance!r}.")
    return importance


def _op_add(context: _Context, params: dict) -> dict:
    text = rules.text_clean(params.get("text", ""))
    importance = _importance_clean(params.get("importance"))
    rules.cap_check(
        count_after=len(context.nuggets) + 1,
        cap=nugget_cap(context.nugget_set.kind),
        kind_label=context.nugget_set.get_kind_display(),
    )
    nugget = _new_nugget(
        context,
        text=text,
        importance=importance,
        origin=Nugget.Origin.ADDED,
        source_segment_id=_segment_clean(context, params.get("source_segment")),
    )
    nuggets = list(context.nuggets)
    after_id = params.get("after")
    index = nuggets.index(context.nugget(after_id)) + 1 if after_id not in (None, "") else len(nuggets)
    nugget.position = index
    nugget.save(force_insert=True)
    nuggets.insert(index, nugget)
    _renumber(context, nuggets)
    context.derived[nugget.pk] = []
    return {"before": [], "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _op_edit(context: _Context, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    before = [context.snapshot(nugget)]
    text = rules.text_clean(params.get("text", ""))
    if text == nugget.text:
        raise rules.InvalidOperation("The text is unchanged.")
    nugget.text = text
    nugget.origin = rules.origin_after_reword(
        origin=nugget.origin,
        new_text=text,
        draft_texts=[context.draft_texts[i] for i in context.derived.get(nugget.pk, [])],
    )
    nugget.save(update_fields=["text", "origin"])
    return {"before": before, "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _op_importance(context: _Context, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    before = [context.snapshot(nugget)]
    nugget.importance = _importance_clean(params.get("importance"))
    nugget.save(update_fields=["importance"])
    return {"before": before, "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _segment_clean(context: _Context, segment_id: str | None) -> str | None:
    """A nugget's source must be one of the segments the assessor is shown: judged relevant by NIST."""
    if not segment_id:
        return None
    shown = Qrel.objects.filter(
        topic_id=context.work.topic_id,
        source__name=NIST_SOURCE,
        grade__gte=Qrel.RELEVANT_MIN_GRADE,
        segment_id=segment_id,
    ).exists()
    if not shown:
        raise rules.InvalidOperation(f"Segment {segment_id} is not one of this topic's relevant segments.")
    return segment_id


def _op_source(context: _Context, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    before = [context.snapshot(nugget)]
    nugget.source_segment_id = _segment_clean(context, params.get("segment"))
    nugget.save(update_fields=["source_segment"])
    return {"before": before, "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _op_delete(context: _Context, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    before = [context.snapshot(nugget)]
    nuggets = list(context.nuggets)
    index = nuggets.index(nugget)
    nuggets.remove(nugget)
    _nuggets_delete(context, [nugget.pk])
    _renumber(context, nuggets)
    focus = nuggets[min(index, len(nuggets) - 1)].pk if nuggets else None
    return {"before": before, "after_ids": [], "focus_id": focus}


def _op_move(context: _Context, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    before = [context.snapshot(nugget)]
    try:
        to_index = int(params.get("to", ""))
    except ValueError:
        raise rules.InvalidOperation("Say where to move the nugget.") from None
    order = rules.moved_order(context.order, nugget_id=nugget.pk, to_index=to_index)
    if order == context.order:
        raise rules.InvalidOperation("The nugget is already there.")
    by_id = {n.pk: n for n in context.nuggets}
    _renumber(context, [by_id[i] for i in order])
    return {"before": before, "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _ids_param(value) -> list:
    if isinstance(value, str):
        return [part for part in value.replace(",", " ").split() if part]
    return list(value or [])


def _op_merge(context: _Context, params: dict) -> dict:
    chosen = []
    for raw in _ids_param(params.get("nuggets")):
        nugget = context.nugget(raw)
        if nugget not in chosen:
            chosen.append(nugget)
    if len(chosen) < 2:
        raise rules.InvalidOperation("Mark at least two nuggets to merge (x marks one).")
    chosen.sort(key=lambda n: n.position)
    before = [context.snapshot(n) for n in chosen]
    text_given = (params.get("text") or "").strip()
    text = rules.text_clean(text_given or "; ".join(n.text for n in chosen))
    importance = params.get("importance")
    if importance is None:
        importance = rules.importance_of_merge(n.importance for n in chosen)
    importance = _importance_clean(importance)
    drafts: list[int] = []
    for n in chosen:
        drafts.extend(d for d in context.derived.get(n.pk, []) if d not in drafts)
    sources = {n.source_segment_id for n in chosen if n.source_segment_id}
    merged = _new_nugget(
        context,
        text=text,
        importance=importance,
        origin=Nugget.Origin.MERGED,
        source_segment_id=sources.pop() if len(sources) == 1 else None,
    )
    nuggets = list(context.nuggets)
    index = nuggets.index(chosen[0])
    merged.position = index
    merged.save(force_insert=True)
    _nuggets_delete(context, [n.pk for n in chosen])
    nuggets = [n for n in nuggets if n not in chosen]
    nuggets.insert(index, merged)
    _renumber(context, nuggets)
    _derived_write(context, {merged.pk: drafts})
    return {"before": before, "after_ids": [merged.pk], "focus_id": merged.pk}


def _op_split(context: _Context, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    parts = rules.split_texts(params.get("texts", ""))
    rules.cap_check(
        count_after=len(context.nuggets) - 1 + len(parts),
        cap=nugget_cap(context.nugget_set.kind),
        kind_label=context.nugget_set.get_kind_display(),
    )
    before = [context.snapshot(nugget)]
    drafts = list(context.derived.get(nugget.pk, []))
    pieces = [
        _new_nugget(
            context,
            text=text,
            importance=nugget.importance,
            origin=Nugget.Origin.SPLIT,
            source_segment_id=nugget.source_segment_id,
        )
        for text in parts
    ]
    nuggets = list(context.nuggets)
    index = nuggets.index(nugget)
    for offset, piece in enumerate(pieces):
        piece.position = index + offset
    pieces = Nugget.objects.bulk_create(pieces)
    _nuggets_delete(context, [nugget.pk])
    nuggets = nuggets[:index] + pieces + nuggets[index + 1 :]
    _renumber(context, nuggets)
    _derived_write(context, {piece.pk: drafts for piece in pieces})
    return {"before": before, "after_ids": [piece.pk for piece in pieces], "focus_id": pieces[0].pk}


OPERATIONS = {
    "add": _op_add,
    "edit": _op_edit,
    "importance": _op_importance,
    "source": _op_source,
    "delete": _op_delete,
    "move": _op_move,
    "merge": _op_merge,
    "split": _op_split,
}


@transaction.atomic
def nugget_operation_apply(
    *,
    work_id: int,
    user: User,
    operation: str,
    params: dict,
    expected_version: int | None,
    op_id: str = "",
) -> OpResult:
    """Apply one workspace operation (add, edit, importance, source, delete, move, merge, split, undo)."""
    if operation == "undo":
        return nugget_undo(work_id=work_id, user=user, expected_version=expected_version, op_id=op_id)
    handler = OPERATIONS.get(operation)
    if handler is None:
        raise rules.InvalidOperation(f"Unknown operation {operation!r}.")
    context, replay = _context_open(
        work_id=work_id, user=user, expected_version=expected_version, op_id=op_id, operation=operation
    )
    if replay is not None:
        return replay
    assert context is not None  # without a replay the context is open
    before_order = context.order
    outcome = handler(context, params)
    return _finish(
        context,
        operation=operation,
        op_id=op_id,
        before=outcome["before"],
        before_order=before_order,
        after_ids=outcome["after_ids"],
        focus_id=outcome["focus_id"],
    )


@transaction.atomic
def nugget_undo(*, work_id: int, user: User, expected_version: int | None, op_id: str = "") -> OpResult:
    """Take back the latest edit not yet undone: the nuggets it touched return to their before state.

    Undo goes strictly backwards (the latest edit first), so the list at that
    moment is exactly the edit's after state and restoring its before is exact.
    """
    context, replay = _context_open(
        work_id=work_id, user=user, expected_version=expected_version, op_id=op_id, operation="undo"
    )
    if replay is not None:
        return replay
    assert context is not None  # without a replay the context is open
    target = (
        NuggetEdit.objects.filter(nugget_set=context.nugget_set, undone=False, operation__in=UNDOABLE)
        .order_by("-set_version", "-id")
        .first()
    )
    if target is None:
        raise rules.InvalidOperation("Nothing to undo.")
    before_order = context.order
    current = {n.pk: n for n in context.nuggets}
    current_before = [context.snapshot(current[s["id"]]) for s in target.after["nuggets"] if s["id"] in current]
    restored_ids = [s["id"] for s in target.before["nuggets"]]
    gone = [s["id"] for s in target.after["nuggets"] if s["id"] not in restored_ids and s["id"] in current]
    if gone:
        _nuggets_delete(context, gone)
        for nugget_id in gone:
            current.pop(nugget_id)
    Through.objects.filter(from_nugget_id__in=[i for i in restored_ids if i in current]).delete()
    to_create = []
    to_update = []
    for snap in target.before["nuggets"]:
        nugget = current.get(snap["id"])
        if nugget is None:
            nugget = Nugget(
                pk=snap["id"],
                nugget_set=context.nugget_set,
                created_by=context.user,
                # The snapshot holds the isoformat this module wrote.
                created_at=cast(datetime, parse_datetime(snap["created_at"])) if snap.get("created_at") else context.now,
                seconds_spent=snap.get("seconds_spent") or 0,
            )
            to_create.append(nugget)
            current[nugget.pk] = nugget
        else:
            to_update.append(nugget)
        nugget.text = snap["text"]
        nugget.importance = snap["importance"]
        nugget.origin = snap["origin"]
        nugget.source_segment_id = snap["source_segment"]
    order = [i for i in target.before["order"] if i in current]
    if len(order) != len(target.before["order"]):
        raise rules.InvalidOperation("The list no longer matches the edit to undo; reload the list.")
    # Anything not in the edit's before order (there should be nothing) stays, at the end.
    order += [i for i in current if i not in order]
    for index, nugget_id in enumerate(order):
        if current[nugget_id] in to_create:
            current[nugget_id].position = index
    if to_update:
        Nugget.objects.bulk_update(to_update, ["text", "importance", "origin", "source_segment"])
    if to_create:
        Nugget.objects.bulk_create(to_create)
    for nugget_id in restored_ids:
        context.derived[nugget_id] = []
    _derived_write(context, {s["id"]: s["derived_from"] for s in target.before["nuggets"]})
    _renumber(context, [current[i] for i in order])
    NuggetEdit.objects.filter(pk=target.pk).update(undone=True)
    focus = restored_ids[0] if restored_ids else None
    if focus is None and context.order:
        # An undone add or merge leaves nothing restored: land on the nugget just before it.
        removed_at = min((s["position"] for s in target.after["nuggets"]), default=0)
        focus = context.order[max(0, min(removed_at - 1, len(context.order) - 1))]
    return _finish(
        context,
        operation="undo",
        op_id=op_id,
        before=current_before,
        before_order=before_order,
        after_ids=restored_ids,
        focus_id=focus,
        extra={"undoes": target.pk, "undone_operation": target.operation},
    )


# --- Submit and reopen ------------------------------------------------------


@transaction.atomic
def nugget_set_submit(
    *, work_id: int, user: User, expected_version: int | None, op_id: str = ""
) -> OpResult:
    """Freeze the list once every nugget has an importance (a retried submit is recognised, like any operation)."""
    context, replay = _context_open(
        work_id=work_id, user=user, expected_version=expected_version, op_id=op_id, operation="submit"
    )
    if replay is not None:
        return replay
    assert context is not None  # without a replay the context is open
    problems = rules.submit_problems(
        nuggets=[(n.position, n.text, n.importance) for n in context.nuggets],
        cap=submit_cap(context.nugget_set.kind),
    )
    if problems:
        raise rules.InvalidOperation(" ".join(problems))
    before_order = context.order
    result = _finish(
        context,
        operation="submit",
        op_id=op_id,
        before=[],
        before_order=before_order,
        after_ids=[],
        focus_id=None,
        extra={"status": NuggetSet.Status.SUBMITTED},
    )
    NuggetSet.objects.filter(pk=context.nugget_set.pk).update(status=NuggetSet.Status.SUBMITTED)
    context.nugget_set.status = NuggetSet.Status.SUBMITTED
    reopening = _last_reopening(context)
    before = _texts_at_reopening(reopening)
    changes = list_changes(
        before=before, nuggets=[(n.pk, n.text, n.origin, context.derived.get(n.pk, [])) for n in context.nuggets]
    ) if before is not None else {}  # fmt: skip
    work_submit_mark(
        work=context.work, user=user, detail={"nuggets": len(context.nuggets), "changes": _changes_json(changes)}
    )
    # After the work is marked: the dependents may reopen work of their own and want the list submitted.
    reason = str(reopening.after.get("reason", "")) if reopening is not None else ""
    nugget_list_changed(context.nugget_set, changes, by=user, before=before, reason=reason)
    return result


def _changes_json(changes: dict[int, str]) -> dict[str, str]:
    return {str(nugget_id): change for nugget_id, change in sorted(changes.items())}


def _last_reopening(context: _Context) -> NuggetEdit | None:
    return NuggetEdit.objects.filter(nugget_set=context.nugget_set, operation="reopen").order_by("-set_version").first()


def _texts_at_reopening(reopening: NuggetEdit | None) -> dict[int, str] | None:
    """The list (nugget id -> text) as it was when the organizer last reopened it; None before any reopening."""
    if reopening is None or "texts" not in reopening.before:
        return None
    return {int(nugget_id): text for nugget_id, text in reopening.before["texts"].items()}


class DependentsUnconfirmed(WorkError):
    """Labels depend on the list: the organizer must see them and confirm before it is reopened."""

    def __init__(self, dependents: list[Dependent]):
        self.dependents = dependents
        total = sum(d.labels for d in dependents)
        super().__init__(
            f"{total} label(s) depend on this nugget list ({', '.join(d.source for d in dependents)}). "
            "Confirm to reopen it: when it is submitted again, labels on removed or reworded nuggets are retired "
            "and the work and LLM conditions that labelled it are asked for the changed nuggets."
        )


@transaction.atomic
def nugget_set_reopen(*, work_id: int, by: User, reason: str = "", confirmed: bool = False) -> AssessorWork:
    """An organizer reopens a submitted list; the reopening is recorded on the work and in the edit log.

    A list with labels on it is reopened only once the organizer has seen what
    depends on it (`confirmed`). The list as it was is kept in the edit log, so
    that its resubmission can tell which nuggets changed.
    """
    work = AssessorWork.objects.select_for_update().get(pk=work_id)
    nugget_set = NuggetSet.objects.select_for_update().get(topic_id=work.topic_id, name=work.nugget_set_name)
    if nugget_set.status != NuggetSet.Status.SUBMITTED:
        raise WorkError("This list is not submitted: nothing to reopen.")
    dependents = set_dependents(nugget_set)
    if dependents and not confirmed:
        raise DependentsUnconfirmed(dependents)
    work_reopen_mark(work=work, by=by, reason=reason)
    nugget_set.status = NuggetSet.Status.OPEN
    nugget_set.version += 1
    nugget_set.save(update_fields=["status", "version"])
    NuggetEdit.objects.create(
        nugget_set=nugget_set,
        user=by,
        operation="reopen",
        before={
            "status": NuggetSet.Status.SUBMITTED,
            # The list as it was submitted (nugget id -> text): its resubmission is compared with it.
            "texts": {str(pk): text for pk, text in nugget_set.nuggets.values_list("pk", "text")},
        },
        after={"status": NuggetSet.Status.OPEN, "reason": reason},
        set_version=nugget_set.version,
    )
    # An open list counts for nothing: the topic's scores under its name are gone until it is submitted again.
    scores_refresh_work(work)
    return work
