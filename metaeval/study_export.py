"""A study's labels, one row per sampled item and judge, with who judged it and when (CSV or JSONL)."""

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from assessor.collection.exporting import PROVENANCE_FIELDS, provenance_record
from assessor.models import Answer, Citation
from assignment.selectors import counted_labels as counted_assignment_labels
from metaeval.judges import Family, Item
from metaeval.models import Study
from metaeval.selectors import SUPPORT_LABEL_NAMES
from metaeval.studies import sample_items, study_judges
from support.selectors import counted_labels as counted_support_labels


@dataclass
class ExportRow:
    study: str
    topic_id: str
    position: int  # the item's place in the assessor's order on the topic (1-based)
    run_id: str
    answer_id: int
    item: str  # "citation ID (sentence N)" or "nugget ID"
    judge: str  # a, b, assessor or llm
    source: str
    label: str
    made_by: str
    # For an LLM's label: the endpoint and model of the job (made_by names the job): two models stay apart.
    endpoint: str
    model: str
    at: str
    seconds: float | None


COLUMNS = list(ExportRow.__dataclass_fields__)


def _provenance(family: str, name: str, items: set[Item]) -> dict[Item, dict]:
    """The counted labels of `name` on `items` with their provenance records."""
    found: dict[Item, tuple[str, tuple]] = {}
    if family == Family.ASSIGNMENT:
        answers = sorted({item[0] for item in items})
        assigned = counted_assignment_labels().filter(assigner=name, answer_id__in=answers).order_by()
        for row in assigned.values_list("answer_id", "nugget_id", "label", *PROVENANCE_FIELDS):
            found[(row[0], row[1])] = (row[2], row[3:])
    else:
        judged = counted_support_labels().filter(method=name, citation_id__in=sorted(item[0] for item in items))
        for row in judged.order_by().values_list("citation_id", "label", *PROVENANCE_FIELDS):
            found[(row[0],)] = (SUPPORT_LABEL_NAMES.get(row[1], str(row[1])), row[2:])
    return {
        item: {"label": label, **provenance_record(*made)} for item, (label, made) in found.items() if item in items
    }


def study_rows(study: Study) -> Iterator[ExportRow]:
    """Every judge's label on every sampled item, by topic and the order the assessor saw them."""
    sample = sample_items(study)
    wanted = {item for items in sample.values() for item in items}
    judges = study_judges(study)
    made = {judge.role: _provenance(study.family, judge.name, wanted) for judge in judges}
    if study.family == Family.ASSIGNMENT:
        answer_of = {item: item[0] for item in wanted}
        describe = {item: f"nugget {item[1]}" for item in wanted}
    else:
        cited = Citation.objects.filter(pk__in=[item[0] for item in wanted]).values_list(
            "pk", "sentence__answer_id", "sentence__index"
        )
        answer_of = {(pk,): answer_id for pk, answer_id, _ in cited}
        describe = {(pk,): f"citation {pk} (sentence {index})" for pk, _, index in cited}
    runs = dict(Answer.objects.filter(pk__in=set(answer_of.values())).values_list("pk", "run__run_id"))
    for topic_id, items in sample.items():
        for position, item in enumerate(items, start=1):
            for judge in judges:
                record = made[judge.role].get(item)
                if record is None:
                    continue
                yield ExportRow(
                    study=study.name,
                    topic_id=topic_id,
                    position=position,
                    run_id=runs.get(answer_of.get(item, 0), ""),
                    answer_id=answer_of.get(item, 0),
                    item=describe.get(item, str(item)),
                    judge=judge.role,
                    source=judge.name,
                    label=record["label"],
                    made_by=record["made_by"],
                    endpoint=record.get("endpoint") or "",
                    model=record.get("model") or "",
                    at=record["at"],
                    seconds=record.get("seconds"),
                )


def study_csv(study: Study) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in study_rows(study):
        writer.writerow(["" if value is None else value for value in asdict(row).values()])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def study_jsonl(study: Study) -> Iterator[str]:
    for row in study_rows(study):
        yield json.dumps(asdict(row)) + "\n"
