"""The nugget workspace's edits: the context every operation opens, and the operations themselves.

Each operation runs in one transaction, holding the work and nugget set rows
locked, and
- refuses a stale version (two tabs never overwrite each other silently),
- refuses a frozen (submitted) list,
- recognises a retried request by its operation id and applies it once, through
  the judging core's record of operations (assessor.work.judging), as every
  assessor's save does,
- logs before and after of the nuggets it touched, and the list order, in
  NuggetEdit (that log is also what undo replays backwards, nuggets.undo),
- credits the assessor's active time (assessor.work.services) and bumps the version.

The query count of an operation does not grow with the list: rows are read
once, positions renumbered with one bulk update, lineage written in bulk.
"""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import F, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from assessor.models import AssessorWork, Qrel
from assessor.work.access import WorkNotFound, assessor_work
from assessor.work.judging import JudgeError, operation_record, operation_replayed
from assessor.work.services import work_activity_record
from nuggets import workspace as rules
from nuggets.dependents import Change, nuggets_delete
from nuggets.giving import NIST_SOURCE, nugget_cap
from nuggets.kinds import WORKSPACE_KINDS
from nuggets.models import GoldAnswer, Nugget, NuggetEdit, NuggetSet

Through = Nugget.derived_from.through

# Operations undo may take back; submit and reopen are decisions, not edits.
UNDOABLE = (
    "add", "edit", "importance", "source", "delete", "move", "merge", "split",
    "rule", "answer_add", "answer_edit", "answer_delete",
)  # fmt: skip

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
class EditContext:
    work: AssessorWork
    nugget_set: NuggetSet
    user: User
    nuggets: list[Nugget]
    derived: dict[int, list[int]]
    draft_texts: dict[int, str]
    now: datetime
    request: list  # what the operation id stands for (operation_request), recorded once the edit is made
    touched: set[int] = field(default_factory=set)
    # A bank's questions: their gold answers, [{"text", "documents"}] in order, by nugget id.
    answers: dict[int, list[dict]] = field(default_factory=dict)

    @property
    def is_bank(self) -> bool:
        return self.nugget_set.form == NuggetSet.Form.QUESTIONS

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
        if self.is_bank:
            return {**self._snapshot(nugget), "rule": nugget.answer_rule, "answers": self.answers.get(nugget.pk, [])}
        return self._snapshot(nugget)

    def _snapshot(self, nugget: Nugget) -> dict:
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


def operation_request(operation: str, version: int, params: dict) -> list:
    """What a nugget edit's operation id stands for: the operation and what it was asked (a digest of its
    parameters), on the list's version it was made on."""
    asked = json.dumps(params, sort_keys=True, default=str)
    return ["nuggets", operation, version, hashlib.sha256(asked.encode()).hexdigest()[:16]]


def context_open(
    *, work_id: int, user: User, expected_version: int | None, op_id: str, operation: str, params: dict | None = None
) -> tuple[EditContext | None, OpResult | None]:
    """Lock the rows and run the checks every operation shares; a replay returns its result at once.

    A replay is the same operation, asked the same, on the same version as the first attempt; an
    operation id reused for anything else (another text on the same version too) is refused, never
    silently answered.
    """
    try:
        work = assessor_work(work_id=work_id, user=user, kinds=WORKSPACE_KINDS, lock=True)
    except WorkNotFound:
        raise rules.InvalidOperation("This topic is not given to you.") from None
    try:
        nugget_set = NuggetSet.objects.select_for_update().get(topic_id=work.topic_id, name=work.nugget_set_name)
    except NuggetSet.DoesNotExist:
        raise rules.InvalidOperation("This work has no nugget set to edit; ask an organizer.") from None
    if expected_version is None:
        raise rules.VersionConflict(expected=None, current=nugget_set.version)
    try:
        request = operation_request(operation, expected_version, params or {})
        first = operation_replayed(work=work, op_id=op_id, request=request)
    except JudgeError:
        raise rules.InvalidOperation("This operation id was already used for another change: reload the page.") from None
    if first is not None:
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
    context = EditContext(
        work=work,
        nugget_set=nugget_set,
        user=user,
        nuggets=nuggets,
        derived=derived,
        draft_texts=draft_texts,
        now=timezone.now(),
        request=request,
    )
    if context.is_bank:
        context.answers = answers_load([nugget.pk for nugget in nuggets])
    return context, None


def answers_load(nugget_ids: Sequence[int]) -> dict[int, list[dict]]:
    answers: dict[int, list[dict]] = {}
    for nugget_id, text, documents in (
        GoldAnswer.objects.filter(nugget_id__in=list(nugget_ids))
        .order_by("nugget_id", "position")
        .values_list("nugget_id", "text", "documents")
    ):
        answers.setdefault(nugget_id, []).append({"text": text, "documents": list(documents)})
    return answers


def answers_write(context: EditContext, answers: dict[int, list[dict]]) -> None:
    """The questions' gold answers become exactly these (replacing what they had), in order."""
    GoldAnswer.objects.filter(nugget_id__in=list(answers)).delete()
    GoldAnswer.objects.bulk_create(
        GoldAnswer(nugget_id=nugget_id, position=position, text=answer["text"], documents=list(answer["documents"]))
        for nugget_id, rows in answers.items()
        for position, answer in enumerate(rows)
    )
    for nugget_id, rows in answers.items():
        context.answers[nugget_id] = [dict(answer) for answer in rows]


def renumber(context: EditContext, nuggets: list[Nugget]) -> None:
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


def derived_write(context: EditContext, links: dict[int, list[int]]) -> None:
    rows = [
        Through(from_nugget_id=nugget_id, to_nugget_id=draft_id)
        for nugget_id, drafts in links.items()
        for draft_id in drafts
    ]
    if rows:
        Through.objects.bulk_create(rows)
    context.derived.update(links)


def nuggets_remove(context: EditContext, ids: Sequence[int]) -> None:
    # Labels on a removed nugget (the list was reopened after labelling) are retired, not lost.
    nuggets_delete(ids, reason=Change.REMOVED)
    for nugget_id in ids:
        context.derived.pop(nugget_id, None)


def _new_nugget(
    context: EditContext, *, text: str, importance: str, origin: str, source_segment_id=None, rule: str = ""
) -> Nugget:
    return Nugget(
        nugget_set=context.nugget_set,
        position=0,
        text=text,
        importance=importance,
        answer_rule=rule,
        origin=origin if context.is_post_edit else "",
        created_by=context.user,
        created_at=context.now,
        seconds_spent=0,
        source_segment_id=source_segment_id,
    )


def edit_finish(
    context: EditContext,
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
    )
    # A retry of the same operation on the same version is answered as applied (context_open).
    operation_record(work=context.work, op_id=op_id, request=context.request, answer={"edit": edit.pk})
    return OpResult(work=context.work, nugget_set=nugget_set, edit=edit, focus_id=focus_id)


# --- Operations -------------------------------------------------------------


def _importance_clean(importance: str | None) -> str:
    importance = (importance or "").strip()
    if importance not in ("", Nugget.Importance.VITAL, Nugget.Importance.OKAY):
        raise rules.InvalidOperation(f"Importance is vital or okay, not {importance!r}.")
    return importance


def rule_clean(rule: str | None) -> str:
    rule = (rule or "").strip().lower()
    if rule not in ("", Nugget.AnswerRule.OR, Nugget.AnswerRule.AND):
        raise rules.InvalidOperation(f"The rule is OR (any answer) or AND (all answers), not {rule!r}.")
    return rule


def _op_add(context: EditContext, params: dict) -> dict:
    text = rules.text_clean(params.get("text", ""))
    importance = _importance_clean(params.get("importance"))
    rule = rule_clean(params.get("rule")) if context.is_bank else ""
    rules.cap_check(
        count_after=len(context.nuggets) + 1,
        cap=nugget_cap(context.nugget_set.kind),
        kind_label=context.nugget_set.kind_label,
        unit="questions" if context.is_bank else "nuggets",
    )
    nugget = _new_nugget(
        context,
        text=text,
        importance=importance,
        origin=Nugget.Origin.ADDED,
        source_segment_id=_segment_clean(context, params.get("source_segment")),
        rule=rule,
    )
    nuggets = list(context.nuggets)
    after_id = params.get("after")
    index = nuggets.index(context.nugget(after_id)) + 1 if after_id not in (None, "") else len(nuggets)
    nugget.position = index
    nugget.save(force_insert=True)
    nuggets.insert(index, nugget)
    renumber(context, nuggets)
    context.derived[nugget.pk] = []
    return {"before": [], "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _op_edit(context: EditContext, params: dict) -> dict:
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


def _op_importance(context: EditContext, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    before = [context.snapshot(nugget)]
    nugget.importance = _importance_clean(params.get("importance"))
    nugget.save(update_fields=["importance"])
    return {"before": before, "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _segment_clean(context: EditContext, segment_id: str | None) -> str | None:
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


def _op_source(context: EditContext, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    before = [context.snapshot(nugget)]
    nugget.source_segment_id = _segment_clean(context, params.get("segment"))
    nugget.save(update_fields=["source_segment"])
    return {"before": before, "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _op_delete(context: EditContext, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    before = [context.snapshot(nugget)]
    nuggets = list(context.nuggets)
    index = nuggets.index(nugget)
    nuggets.remove(nugget)
    nuggets_remove(context, [nugget.pk])
    renumber(context, nuggets)
    focus = nuggets[min(index, len(nuggets) - 1)].pk if nuggets else None
    return {"before": before, "after_ids": [], "focus_id": focus}


def _op_move(context: EditContext, params: dict) -> dict:
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
    renumber(context, [by_id[i] for i in order])
    return {"before": before, "after_ids": [nugget.pk], "focus_id": nugget.pk}


def _ids_param(value) -> list:
    if isinstance(value, str):
        return [part for part in value.replace(",", " ").split() if part]
    return list(value or [])


def _op_merge(context: EditContext, params: dict) -> dict:
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
    # A bank's merged question: the answers of all, in order (one of each text), under the first rule given.
    answers = rules.answers_of_merge([context.answers.get(n.pk, []) for n in chosen]) if context.is_bank else []
    merged = _new_nugget(
        context,
        text=text,
        importance=importance,
        origin=Nugget.Origin.MERGED,
        source_segment_id=sources.pop() if len(sources) == 1 else None,
        rule=next((n.answer_rule for n in chosen if n.answer_rule), "") if context.is_bank else "",
    )
    nuggets = list(context.nuggets)
    index = nuggets.index(chosen[0])
    merged.position = index
    merged.save(force_insert=True)
    nuggets_remove(context, [n.pk for n in chosen])
    nuggets = [n for n in nuggets if n not in chosen]
    nuggets.insert(index, merged)
    renumber(context, nuggets)
    derived_write(context, {merged.pk: drafts})
    if answers:
        answers_write(context, {merged.pk: answers})
    return {"before": before, "after_ids": [merged.pk], "focus_id": merged.pk}


def _op_split(context: EditContext, params: dict) -> dict:
    nugget = context.nugget(params.get("nugget"))
    parts = rules.split_texts(params.get("texts", ""))
    rules.cap_check(
        count_after=len(context.nuggets) - 1 + len(parts),
        cap=nugget_cap(context.nugget_set.kind),
        kind_label=context.nugget_set.kind_label,
        unit="questions" if context.is_bank else "nuggets",
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
            # A bank's split question: its rule and answers stay with the first part.
            rule=nugget.answer_rule if index == 0 else "",
        )
        for index, text in enumerate(parts)
    ]
    nuggets = list(context.nuggets)
    index = nuggets.index(nugget)
    for offset, piece in enumerate(pieces):
        piece.position = index + offset
    pieces = Nugget.objects.bulk_create(pieces)
    nuggets_remove(context, [nugget.pk])
    nuggets = nuggets[:index] + pieces + nuggets[index + 1 :]
    renumber(context, nuggets)
    derived_write(context, {piece.pk: drafts for piece in pieces})
    if context.answers.get(nugget.pk):
        answers_write(context, {pieces[0].pk: context.answers[nugget.pk]})
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


