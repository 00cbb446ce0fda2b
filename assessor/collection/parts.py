"""What the collection itself adds to the registry: its kinds of file."""

from django import forms

from assessor.collection.deleting import QRELS_DELETABLE
from assessor.collection.importing.qrels import qrels_import
from assessor.collection.importing.runs import run_import
from assessor.collection.importing.segments import segments_import
from assessor.collection.importing.topics import topics_import
from assessor.registry import Importer, register_deletable, register_importer


def _source_field() -> forms.Field:
    return forms.SlugField(required=False, label="Qrels source", help_text="nist, umbrela, or any name.")


def register() -> None:
    register_importer(Importer("topics", "Topics (topic_id<TAB>query)", topics_import))
    register_importer(Importer("segments", "Segments (JSONL docid, segment)", segments_import))
    register_importer(
        Importer(
            "qrels",
            "Qrels (TREC qrels)",
            qrels_import,
            fields={"source": _source_field},
            required=("source",),
            options=lambda data: {"source": data["source"]},
        )
    )
    register_importer(Importer("run", "Run (TREC RAG 2024 run format)", run_import))
    register_deletable(QRELS_DELETABLE)
