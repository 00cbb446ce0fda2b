"""The labels one judge (a label source) gave, per topic and item, for agreement on the items judges share.

An item is what one label is about, as a tuple: (first citation id,) for
support, (answer id, nugget id) for nugget assignment, and what another label
family says for its own (assessor.registry.LabelFamily.item_labels). Labels are
named as the confusion matrices name them (NS/PS/FS; not_support/partial_support/support),
and only the labels the scores count are read (assessor.scoring.lifecycle).
"""

from collections.abc import Collection
from enum import StrEnum

from assessor.registry import LabelFamily, registry
from assignment import kinds as assignment_kinds
from assignment.selectors import counted_labels as counted_assignment_labels
from metaeval.selectors import SUPPORT_LABEL_NAMES
from metaeval.sources import ASSIGNMENT_LABELS, SUPPORT_LABELS
from support import kinds as support_kinds
from support.selectors import counted_labels as counted_support_labels


class Family(StrEnum):
    """The label families whose judges the meta-evaluation compares item by item."""

    ASSIGNMENT = assignment_kinds.LABEL_FAMILY
    SUPPORT = support_kinds.LABEL_FAMILY


Item = tuple[int, ...]
TopicLabels = dict[str, dict[Item, str]]  # topic id -> item -> label

LABELS_OF_FAMILY = {Family.ASSIGNMENT: ASSIGNMENT_LABELS, Family.SUPPORT: SUPPORT_LABELS}


def family_labels(family: str) -> list[str]:
    """Every label of the family's items, in their order."""
    if family in LABELS_OF_FAMILY:
        return list(LABELS_OF_FAMILY[Family(family)])
    return list(_itemized(family).labels)


def _itemized(family: str) -> LabelFamily:
    label_family = registry.label_families.get(family)
    if label_family is None or label_family.item_labels is None:
        raise ValueError(f"no item labels for the family {family!r}")
    return label_family


def labels_by_topic(
    *, family: str, name: str, topics: Collection[str] | None = None, nugget_set: str = ""
) -> TopicLabels:
    """The counted labels of the source `name`, per topic and item (assignment: on the nugget set `nugget_set`)."""
    result: TopicLabels = {}
    if family == Family.ASSIGNMENT:
        rows = counted_assignment_labels().filter(assigner=name)
        if nugget_set:
            rows = rows.filter(nugget__nugget_set__name=nugget_set)
        if topics is not None:
            rows = rows.filter(nugget__nugget_set__topic_id__in=list(topics))
        for topic_id, answer_id, nugget_id, label in rows.order_by().values_list(
            "nugget__nugget_set__topic_id", "answer_id", "nugget_id", "label"
        ):
            result.setdefault(topic_id, {})[(answer_id, nugget_id)] = label
        return result
    if family != Family.SUPPORT:
        item_labels = _itemized(family).item_labels
        assert item_labels is not None  # _itemized checked
        return item_labels(name, topics)
    names = {int(value): name for value, name in SUPPORT_LABEL_NAMES.items()}
    support = counted_support_labels().filter(method=name, citation__position=0, label__in=list(names))
    if topics is not None:
        support = support.filter(citation__sentence__answer__topic_id__in=list(topics))
    for topic_id, citation_id, value in support.order_by().values_list(
        "citation__sentence__answer__topic_id", "citation_id", "label"
    ):
        result.setdefault(topic_id, {})[(citation_id,)] = names[value]
    return result


def flat(labels: TopicLabels) -> dict[Item, str]:
    return {item: label for per_topic in labels.values() for item, label in per_topic.items()}


def item_key(stored: int | list[int]) -> Item:
    """An item as a work's `items` field stores it (JSON: a citation id, or a list such as [answer id, nugget id])."""
    if isinstance(stored, list):
        return tuple(int(part) for part in stored)
    return (int(stored),)


def item_stored(item: Item) -> int | list[int]:
    """The JSON form of an item in a work's `items` (what the judging pages read): one number alone, else a list."""
    return item[0] if len(item) == 1 else list(item)
