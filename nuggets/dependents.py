"""What hangs on a topic's nuggets, and how a change of the list reaches it.

Labels of other apps (assignment labels) are made against nuggets. The apps
that keep them register here (from their `ready()`), so that this app can
show an organizer what depends on a list before it is reopened or replaced,
retire the labels of removed or reworded nuggets (kept for the record, never
scored), and tell the dependents which nuggets changed after resubmission.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User

from nuggets.models import Nugget, NuggetSet


class Change:
    """Why a nugget of a resubmitted list needs new labels (or lost its old ones)."""

    ADDED = "added"
    REWORDED = "reworded"
    MERGED = "merged"
    SPLIT = "split"
    REMOVED = "removed"
    REPLACED = "replaced"  # the whole list replaced by an import


@dataclass(frozen=True)
class Dependent:
    """Labels of one source on some nuggets, for the organizer's confirmation."""

    source: str  # "assigner 'manual' (people's work)"
    labels: int
    kind: str  # the source's kind: person, llm, file


@dataclass(frozen=True)
class NuggetDependents:
    name: str
    # nugget ids -> the labels on them, per source
    describe: Callable[[Sequence[int]], list[Dependent]]
    # (nugget ids, reason) -> how many labels were retired
    retire: Callable[[Sequence[int], str], int]
    # (the resubmitted set, nugget id -> Change, who, nugget id -> its text before, the organizer's reason)
    # -> what was done, in sentences
    changed: Callable[[NuggetSet, Mapping[int, str], User | None, Mapping[int, str], str], list[str]]


_dependents: list[NuggetDependents] = []


def register_nugget_dependents(dependents: NuggetDependents) -> None:
    if any(d.name == dependents.name for d in _dependents):
        raise ValueError(f"nugget dependents {dependents.name!r} registered twice")
    _dependents.append(dependents)


def nugget_dependents(nugget_ids: Sequence[int]) -> list[Dependent]:
    return [dependent for d in _dependents for dependent in d.describe(nugget_ids)]


def set_dependents(nugget_set: NuggetSet) -> list[Dependent]:
    return nugget_dependents(list(nugget_set.nuggets.values_list("pk", flat=True)))


def nuggets_retire(nugget_ids: Sequence[int], *, reason: str) -> int:
    return sum(d.retire(nugget_ids, reason) for d in _dependents) if nugget_ids else 0


def nuggets_delete(nugget_ids: Sequence[int], *, reason: str = Change.REMOVED) -> int:
    """Delete nuggets, retiring the labels on them first; returns the labels retired."""
    retired = nuggets_retire(nugget_ids, reason=reason)
    Nugget.objects.filter(pk__in=nugget_ids).delete()
    return retired


def nugget_list_changed(
    nugget_set: NuggetSet,
    changes: Mapping[int, str],
    *,
    by: User | None,
    before: Mapping[int, str] | None = None,
    reason: str = "",
) -> list[str]:
    """Tell every dependent which nuggets changed (after a resubmission or a replacement).

    `before`: the nuggets' texts as they were labelled, kept with the labels a rewording retires.
    `reason`: why the organizer reopened the list, passed on to whoever labels the changed nuggets.
    """
    if not changes:
        return []
    return [line for d in _dependents for line in d.changed(nugget_set, changes, by, before or {}, reason)]


def list_changes(
    *, before: Mapping[int, str], nuggets: Sequence[tuple[int, str, str, Sequence[int]]]
) -> dict[int, str]:
    """How a list changed since `before` (nugget id -> text): pure.

    nuggets: the list now, as (id, text, origin, ids it derives from). A new
    nugget derived from two or more old ones is merged, from one that is gone
    split, otherwise added; a kept nugget with another text is reworded; an old
    nugget that is gone is removed. Importance changes need no new label.
    """
    changes: dict[int, str] = {}
    now = {nugget_id for nugget_id, *_ in nuggets}
    for nugget_id, text, origin, derived_from in nuggets:
        if nugget_id in before:
            if before[nugget_id] != text:
                changes[nugget_id] = Change.REWORDED
            continue
        old_parents = [parent for parent in derived_from if parent in before]
        if origin == Nugget.Origin.MERGED or len(old_parents) > 1:
            changes[nugget_id] = Change.MERGED
        elif origin == Nugget.Origin.SPLIT or (old_parents and old_parents[0] not in now):
            changes[nugget_id] = Change.SPLIT
        else:
            changes[nugget_id] = Change.ADDED
    for nugget_id in before:
        if nugget_id not in now:
            changes[nugget_id] = Change.REMOVED
    return changes
