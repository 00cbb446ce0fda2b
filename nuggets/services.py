"""The nugget workspace's entry points: apply an operation (undo included), submit the list, reopen it.

The operations are in nuggets.editing, undo in nuggets.undo, giving the work in nuggets.giving.
"""

from django.contrib.auth.models import User
from django.db import transaction

from assessor.models import AssessorWork
from assessor.scoring.kept import scores_refresh_work
from assessor.work.services import WorkError, work_reopen_mark, work_submit_mark
from nuggets import workspace as rules
from nuggets.bankediting import BANK_OPERATIONS
from nuggets.dependents import Dependent, list_changes, nugget_list_changed, set_dependents
from nuggets.editing import OPERATIONS, EditContext, OpResult, context_open, edit_finish
from nuggets.giving import submit_cap
from nuggets.kinds import WORKSPACE_KINDS
from nuggets.models import NuggetEdit, NuggetSet
from nuggets.undo import nugget_undo


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
    handler = OPERATIONS.get(operation) or BANK_OPERATIONS.get(operation)
    if handler is None:
        raise rules.InvalidOperation(f"Unknown operation {operation!r}.")
    context, replay = context_open(
        work_id=work_id, user=user, expected_version=expected_version, op_id=op_id, operation=operation, params=params
    )
    if replay is not None:
        return replay
    assert context is not None  # without a replay the context is open
    before_order = context.order
    outcome = handler(context, params)
    return edit_finish(
        context,
        operation=operation,
        op_id=op_id,
        before=outcome["before"],
        before_order=before_order,
        after_ids=outcome["after_ids"],
        focus_id=outcome["focus_id"],
    )


# --- Submit and reopen ------------------------------------------------------


@transaction.atomic
def nugget_set_submit(
    *, work_id: int, user: User, expected_version: int | None, op_id: str = ""
) -> OpResult:
    """Freeze the list once every nugget has an importance (a retried submit is recognised, like any operation)."""
    context, replay = context_open(
        work_id=work_id, user=user, expected_version=expected_version, op_id=op_id, operation="submit"
    )
    if replay is not None:
        return replay
    assert context is not None  # without a replay the context is open
    if context.is_bank:
        problems = rules.bank_submit_problems(
            questions=[(n.position, n.answer_rule, len(context.answers.get(n.pk, []))) for n in context.nuggets],
            cap=submit_cap(context.nugget_set.kind),
        )
    else:
        problems = rules.submit_problems(
            nuggets=[(n.position, n.text, n.importance) for n in context.nuggets],
            cap=submit_cap(context.nugget_set.kind),
        )
    if problems:
        raise rules.InvalidOperation(" ".join(problems))
    before_order = context.order
    result = edit_finish(
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


def _last_reopening(context: EditContext) -> NuggetEdit | None:
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
    work = AssessorWork.objects.select_for_update().filter(pk=work_id, kind__in=WORKSPACE_KINDS).first()
    if work is None:
        raise WorkError("No such nugget work.")
    nugget_set = (
        NuggetSet.objects.select_for_update().filter(topic_id=work.topic_id, name=work.nugget_set_name).first()
    )
    if nugget_set is None:
        raise WorkError("This work has no nugget list to reopen.")
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
