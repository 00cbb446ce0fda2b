"""A study's labels, one row per sampled item and judge, with who judged it and when (CSV or JSONL)."""

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from assessor.collection.exporting import provenance_record
from assessor.models import Answer
from assessor.models.keys import published_id
from assessor.registry import StudyJudging
from metaeval.judges import Item
from metaeval.models import Study
from metaeval.studies import sample_items, study_judges, study_judging


@dataclass
class ExportRow:
    study: str
    topic_id: str
    position: int  # the item's place in the assessor's order on the topic (1-based)
    run_id: str
    answer_id: int
    item: str  # the family's words for it: "citation ID (sentence N)", "nugget ID"...
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


def _provenance(judging: StudyJudging, name: str, items: set[Item]) -> dict[Item, dict]:
    """The counted labels of `name` on `items` with their provenance records."""
    return {
        item: {"label": label, **provenance_record(*made)}
        for item, (label, made) in judging.labelled(name, items).items()
    }


def study_rows(study: Study) -> Iterator[ExportRow]:
    """Every judge's label on every sampled item, by topic and the order the assessor saw them."""
    judging = study_judging(study.family)
    sample = sample_items(study)
    wanted = {item for items in sample.values() for item in items}
    judges = study_judges(study)
    made = {judge.role: _provenance(judging, judge.name, wanted) for judge in judges}
    shown = judging.shown(wanted)
    answer_of = {item: its.answer_id for item, its in shown.items()}
    describe = {item: its.text for item, its in shown.items()}
    runs = dict(Answer.objects.filter(pk__in=set(answer_of.values())).values_list("pk", "run__run_id"))
    for topic_id, items in sample.items():
        for position, item in enumerate(items, start=1):
            for judge in judges:
                record = made[judge.role].get(item)
                if record is None:
                    continue
                yield ExportRow(
                    study=study.name,
                    topic_id=published_id(topic_id),
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
