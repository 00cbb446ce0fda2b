"""The labels one judge (a label source) gave, per topic and item, for agreement on the items judges share.

An item is what one label is about, as a tuple of ints, and the family whose
labels they are says what (assessor.registry.LabelFamily.item_labels, or
`set_item_labels` for a family labelled against nugget lists): (first citation
id,) for support, (answer id, nugget id) for nugget assignment. Labels are named
as the confusion matrices name them, and only the labels the scores count are
read (assessor.scoring.lifecycle).
"""

from collections.abc import Collection

from assessor.registry import LabelFamily, StudyItem, TopicItemLabels, registry

Item = StudyItem
TopicLabels = TopicItemLabels  # topic id -> item -> label


def family_labels(family: str) -> list[str]:
    """Every label of the family's items, in their order."""
    return list(_itemized(family).labels)


def _itemized(family: str) -> LabelFamily:
    label_family = registry.label_families.get(family)
    if label_family is None or (label_family.item_labels is None and label_family.set_item_labels is None):
        raise ValueError(f"no item labels for the family {family!r}")
    return label_family


def labels_by_topic(
    *, family: str, name: str, topics: Collection[str] | None = None, nugget_set: str = ""
) -> TopicLabels:
    """The counted labels of the source `name`, per topic and item (on the nugget list `nugget_set`, where the
    family's labels are made against one)."""
    label_family = _itemized(family)
    if label_family.set_item_labels is not None:
        return label_family.set_item_labels(name, topics, nugget_set)
    assert label_family.item_labels is not None  # _itemized checked
    return label_family.item_labels(name, topics)


def flat(labels: TopicLabels) -> dict[Item, str]:
    return {item: label for per_topic in labels.values() for item, label in per_topic.items()}
