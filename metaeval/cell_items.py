"""The items behind a cell of the confusion matrix: what two sources both labelled, the first with the row's label
and the second with the column's, grouped by the answer they are about (each a link to its page of every
judge's labels, collection:answer).

Read through the registry alone: a source's score family names its label source (`ScoreFamily.label_source`, or
the label family whose scores it keeps), the label family gives the labels item by item (`item_labels`, or
`set_item_labels` on a nugget list) under the names the matrix counts them by, and its part in the disagreement
study says which answer each item is about (`StudyJudging.shown`). A family without item labels (grades,
preferences) or a support method read as yes/no against another family has no items to list here.
"""

from collections import defaultdict
from dataclasses import dataclass, field

from assessor.models import Answer
from assessor.registry import LabelFamily, StudyItem, registry
from metaeval.judges import flat, labels_by_topic
from metaeval.sources import Source, SourceError, SourceKind, labels_comparable, source_family, source_parse


class CellError(LookupError):
    """Sources or labels whose cell has no items to list; the message says why."""


@dataclass
class CellAnswer:
    answer_id: int
    run_id: str
    topic_id: str
    items: list[str] = field(default_factory=list)  # the family's words for each item: "nugget 7", "citation 12..."


@dataclass
class CellItems:
    a: str
    b: str
    label_a: str
    label_b: str
    items: int
    answers: list[CellAnswer]


def _label_family(source: Source) -> LabelFamily | None:
    """The label family whose sources the source's score family scores, where it gives labels item by item and
    says which answer an item is about."""
    if source.kind is SourceKind.SCORES:
        return None
    score_family = source_family(source).name
    for family in registry.label_families.values():
        if (family.score_family or family.name) == score_family and family.study is not None:
            if family.item_labels is not None or family.set_item_labels is not None:
                return family
    return None


def _columns(source: Source) -> tuple[str, ...]:
    if source.kind is SourceKind.CONDITION:
        return (source.nuggets, source.assigner)
    if source.kind is SourceKind.SUPPORT:
        return (source.name,)
    return source.columns


def _labels(family: LabelFamily, source: Source) -> dict[StudyItem, str]:
    """A source's counted labels by item: on its nugget list, where the family labels against one."""
    columns = _columns(source)
    if family.set_item_labels is not None:
        nugget_set, name = columns
        return flat(labels_by_topic(family=family.name, name=name, nugget_set=nugget_set))
    return flat(labels_by_topic(family=family.name, name=columns[-1]))


def cells_listed(a: Source, b: Source) -> bool:
    """Whether the cells of these two sources' matrix can list their items."""
    if not labels_comparable(a, b) or a.kind is SourceKind.SCORES or b.kind is SourceKind.SCORES:
        return False
    family_a, family_b = _label_family(a), _label_family(b)
    return family_a is not None and family_a is family_b


def cell_items(a_text: str, b_text: str, label_a: str, label_b: str) -> CellItems:
    """The items `a_text` labelled `label_a` and `b_text` labelled `label_b`, by answer (run, topic)."""
    try:
        a, b = source_parse(a_text), source_parse(b_text)
    except SourceError as exc:
        raise CellError(str(exc.args[0] if exc.args else exc)) from None
    if not cells_listed(a, b):
        raise CellError(f"the labels of {a} and {b} do not pair up item by item in one family")
    family = _label_family(a)
    assert family is not None and family.study is not None  # cells_listed said so
    for label in (label_a, label_b):
        if label not in family.labels:
            raise CellError(f"{label!r} is not a label of the {family.label}s: {', '.join(family.labels)}")
    labels_b = _labels(family, b)
    items = [item for item, label in _labels(family, a).items() if label == label_a and labels_b.get(item) == label_b]
    shown = family.study.shown(items)
    by_answer: dict[int, list[str]] = defaultdict(list)
    for item in sorted(items):
        if item in shown:
            by_answer[shown[item].answer_id].append(shown[item].text)
    answers = [
        CellAnswer(answer_id=pk, run_id=run_id, topic_id=topic_id, items=by_answer[pk])
        for pk, run_id, topic_id in Answer.objects.filter(pk__in=list(by_answer))
        .order_by("topic_id", "run__run_id")
        .values_list("pk", "run__run_id", "topic_id")
    ]
    return CellItems(a=str(a), b=str(b), label_a=label_a, label_b=label_b, items=len(items), answers=answers)
