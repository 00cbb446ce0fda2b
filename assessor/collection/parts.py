"""What the collection itself adds to the registry: its kinds of file."""

from django import forms

from assessor.collection.deleting import QRELS_DELETABLE
from assessor.collection.importing.qrels import qrels_import
from assessor.collection.importing.runs import run_import
from assessor.collection.importing.segments import segments_import
from assessor.collection.importing.topics import topics_import
from assessor.collection.kinds import QRELS, QRELS_FAMILY, RUN, SEGMENTS, TOPICS
from assessor.names import NameField
from assessor.registry import (
    Importer,
    LabelFamily,
    ScoreRefresh,
    register_deletable,
    register_importer,
    register_label_family,
)


def _source_field() -> forms.Field:
    return NameField(required=False, label="Qrels source", help_text="nist, umbrela, or any name.")


def register() -> None:
    register_importer(Importer(TOPICS, "Topics (topic_id<TAB>query)", topics_import))
    register_importer(Importer(SEGMENTS, "Segments (JSONL docid, segment)", segments_import))
    register_importer(
        Importer(
            QRELS,
            "Qrels (TREC qrels)",
            qrels_import,
            fields={"source": _source_field},
            required=("source",),
            options=lambda data: {"source": data["source"]},
        )
    )
    register_importer(Importer(RUN, "Run (TREC RAG 2024 run format)", run_import, scores=ScoreRefresh.TOUCHED))
    register_label_family(LabelFamily(QRELS_FAMILY, "qrels source"))
    register_deletable(QRELS_DELETABLE)
