"""Every source's labels of one answer's items, side by side: what the apps' sections of the answer page show.

An app's section (assessor.registry.AnswerPanel) hands its labels here, each a label model with its
provenance (assessor.models.LabelProvenance: the source, and the person, job or file that made it), and
says what item each is about and how it reads. One table has a column per source and a row per item; a row
where two or more sources gave different labels is a disagreement, the one rule every section marks by.
"""

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assessor.models import LabelSource
from assessor.scoring.lifecycle import provisional_flag
from assessor.sources import source_owner


@dataclass(frozen=True)
class SourceColumn:
    """A source, as its column's head shows it: its name, kind and who stands behind it."""

    name: str
    kind: str  # person, llm or file
    kind_label: str
    owner: str  # assessor.sources.source_owner: the people, the LLM (model, endpoint, job) or the file


@dataclass(frozen=True)
class LabelCell:
    """One source's label of one item, with who made it and, for an LLM, why."""

    label: str
    made_by: str  # "alice (work 3, 12 s)", "job 7", "file support.jsonl"
    css: str = ""  # the label's colour class (support, fs, ps...)
    reasoning: str = ""
    note: str = ""  # more of the label: "post-edited from PS", "confidence 0.8"
    compared: bool = True  # False: a label that agrees or disagrees with none (unjudged)


@dataclass
class ItemRow:
    """An item of the answer (a nugget, a citation, a question, a pair) and each source's label of it."""

    key: Hashable
    text: str
    cells: list[LabelCell | None]  # in the order of the table's columns; None: that source did not label it
    anchor: str = ""  # the row's id on the page
    detail: str = ""  # what the item is about, under its text ("sentence 2", "nugget list auto_edit")
    sentence_index: int | None = None  # the answer's sentence the item belongs to, where it belongs to one
    href: str = ""  # a page of the item (the other report of a pair)

    @property
    def disagree(self) -> bool:
        """Two or more sources labelled the item, and not all alike."""
        return len({cell.label for cell in self.cells if cell is not None and cell.compared}) > 1


@dataclass
class LabelTable:
    title: str
    columns: list[SourceColumn]
    rows: list[ItemRow] = field(default_factory=list)

    @property
    def disagreeing(self) -> list[ItemRow]:
        return [row for row in self.rows if row.disagree]


def made_by(label: Any) -> str:
    """Who made one label, from its provenance: the person (with the work and the active seconds), the job or the
    file, and whether the scores count it yet (`provisional`, where the label is annotated with it:
    `provisional_annotation`). The label's `created_by`, `job` and `imported_from` are read (select them with it)."""
    maker = _maker(label)
    return f"{maker}, provisional" if getattr(label, "provisional", False) else maker


def provisional_annotation() -> dict[str, Any]:
    """Labels annotated with it (`.annotate(**provisional_annotation())`) say whether they were made in open work or
    by an unfinished job: not counted yet."""
    return {"provisional": provisional_flag()}


def _maker(label: Any) -> str:
    if label.created_by_id:
        work = f"work {label.work_id}" if label.work_id else ""
        seconds = f"{label.seconds_spent:.0f} s" if label.seconds_spent is not None else ""
        details = ", ".join(part for part in (work, seconds) if part)
        return f"{label.created_by.username}{f' ({details})' if details else ''}"
    if label.job_id:
        return f"job {label.job_id}"
    if label.imported_from_id:
        return f"file {label.imported_from.file_name}"
    return "unknown"


def source_column(source: LabelSource) -> SourceColumn:
    return SourceColumn(
        name=source.name, kind=source.kind, kind_label=source.get_kind_display(), owner=source_owner(source)
    )


PROVENANCE_RELATED = ("source", "source__imported_from", "created_by", "imported_from")


def label_table(
    *,
    title: str,
    labels: Iterable[Any],
    item: Callable[[Any], Hashable],
    cell: Callable[[Any], LabelCell],
    rows: Sequence[ItemRow],
    anchor: str,
) -> LabelTable:
    """A table of `rows` (the items, in the page's order, their cells empty) with a column per source of
    `labels`, in the order of the sources' names; a label of an item not in `rows` is left out, and so is a row
    no source labelled. `anchor` prefixes each row's id."""
    labels = list(labels)
    sources = sorted({label.source for label in labels}, key=lambda source: (source.name, source.pk))
    place = {source.pk: index for index, source in enumerate(sources)}
    by_key = {row.key: row for row in rows}
    for row in rows:
        row.cells = [None] * len(sources)
    for label in labels:
        labelled = by_key.get(item(label))
        if labelled is not None:
            labelled.cells[place[label.source_id]] = cell(label)
    kept = [row for row in rows if any(found is not None for found in row.cells)]
    for number, row in enumerate(kept, start=1):
        row.anchor = f"{anchor}-{number}"
    return LabelTable(title=title, columns=[source_column(source) for source in sources], rows=kept)
