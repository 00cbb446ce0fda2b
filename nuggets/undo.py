"""Undo in the nugget workspace: the latest edit not yet undone is taken back, nugget by nugget.

Undo goes strictly backwards (the latest edit first), so the list at that
moment is exactly the edit's after state, and restoring its before is exact:
the nuggets the edit made are removed, the ones it changed or removed are
written back as they were, with their lineage, and the list takes the edit's
before order.
"""

from datetime import datetime
from typing import cast

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.dateparse import parse_datetime

from nuggets import workspace as rules
from nuggets.editing import (
    UNDOABLE,
    EditContext,
    OpResult,
    Through,
    answers_write,
    context_open,
    derived_write,
    edit_finish,
    nuggets_remove,
    renumber,
)
from nuggets.models import Nugget, NuggetEdit


@transaction.atomic
def nugget_undo(*, work_id: int, user: User, expected_version: int | None, op_id: str = "") -> OpResult:
    """Take back the latest edit not yet undone: the nuggets it touched return to their before state."""
    context, replay = context_open(
        work_id=work_id, user=user, expected_version=expected_version, op_id=op_id, operation="undo"
    )
    if replay is not None:
        return replay
    assert context is not None  # without a replay the context is open
    target = _latest_edit(context)
    before_order = context.order
    current = {nugget.pk: nugget for nugget in context.nuggets}
    current_before = [context.snapshot(current[s["id"]]) for s in target.after["nuggets"] if s["id"] in current]
    restored_ids = [snapshot["id"] for snapshot in target.before["nuggets"]]
    _made_remove(context, target, current, keep=restored_ids)
    created = _restore(context, target, current, restored_ids)
    order = _before_order(target, current)
    for index, nugget_id in enumerate(order):
        if nugget_id in created:
            current[nugget_id].position = index
    if created:
        Nugget.objects.bulk_create(created.values())
    if context.is_bank:
        answers_write(context, {s["id"]: s.get("answers", []) for s in target.before["nuggets"]})
    for nugget_id in restored_ids:
        context.derived[nugget_id] = []
    derived_write(context, {s["id"]: s["derived_from"] for s in target.before["nuggets"]})
    renumber(context, [current[i] for i in order])
    NuggetEdit.objects.filter(pk=target.pk).update(undone=True)
    return edit_finish(
        context,
        operation="undo",
        op_id=op_id,
        before=current_before,
        before_order=before_order,
        after_ids=restored_ids,
        focus_id=_focus(context, target, restored_ids),
        extra={"undoes": target.pk, "undone_operation": target.operation},
    )


def _latest_edit(context: EditContext) -> NuggetEdit:
    target = (
        NuggetEdit.objects.filter(nugget_set=context.nugget_set, undone=False, operation__in=UNDOABLE)
        .order_by("-set_version", "-id")
        .first()
    )
    if target is None:
        raise rules.InvalidOperation("Nothing to undo.")
    return target


def _made_remove(context: EditContext, target: NuggetEdit, current: dict[int, Nugget], *, keep: list[int]) -> None:
    """Remove the nuggets the edit made (in its after state, not its before)."""
    made = [s["id"] for s in target.after["nuggets"] if s["id"] not in keep and s["id"] in current]
    if made:
        nuggets_remove(context, made)
        for nugget_id in made:
            current.pop(nugget_id)


def _restore(
    context: EditContext, target: NuggetEdit, current: dict[int, Nugget], restored_ids: list[int]
) -> dict[int, Nugget]:
    """Write back the nuggets of the edit's before state: update those still here, and return the ones to
    create again (added to `current`, positioned by the caller)."""
    Through.objects.filter(from_nugget_id__in=[i for i in restored_ids if i in current]).delete()
    created: dict[int, Nugget] = {}
    updated: list[Nugget] = []
    for snapshot in target.before["nuggets"]:
        nugget = current.get(snapshot["id"])
        if nugget is None:
            nugget = current[snapshot["id"]] = created[snapshot["id"]] = _recreated(context, snapshot)
        else:
            updated.append(nugget)
        nugget.text = snapshot["text"]
        nugget.importance = snapshot["importance"]
        nugget.origin = snapshot["origin"]
        nugget.source_segment_id = snapshot["source_segment"]
        nugget.answer_rule = snapshot.get("rule", "")
    if updated:
        Nugget.objects.bulk_update(updated, ["text", "importance", "origin", "source_segment", "answer_rule"])
    return created


def _recreated(context: EditContext, snapshot: dict) -> Nugget:
    """A nugget the edit removed, made again under its own id, with its first provenance."""
    # The snapshot holds the isoformat nuggets.editing wrote.
    made_at = cast(datetime, parse_datetime(snapshot["created_at"])) if snapshot.get("created_at") else context.now
    return Nugget(
        pk=snapshot["id"],
        nugget_set=context.nugget_set,
        created_by=context.user,
        created_at=made_at,
        seconds_spent=snapshot.get("seconds_spent") or 0,
    )


def _before_order(target: NuggetEdit, current: dict[int, Nugget]) -> list[int]:
    order = [nugget_id for nugget_id in target.before["order"] if nugget_id in current]
    if len(order) != len(target.before["order"]):
        raise rules.InvalidOperation("The list no longer matches the edit to undo; reload the list.")
    # Anything not in the edit's before order (there should be nothing) stays, at the end.
    return order + [nugget_id for nugget_id in current if nugget_id not in order]


def _focus(context: EditContext, target: NuggetEdit, restored_ids: list[int]) -> int | None:
    """Where the cursor lands: the first nugget restored, or, for an undone add or merge, the one before it."""
    if restored_ids:
        return restored_ids[0]
    if not context.order:
        return None
    removed_at = min((s["position"] for s in target.after["nuggets"]), default=0)
    return context.order[max(0, min(removed_at - 1, len(context.order) - 1))]
