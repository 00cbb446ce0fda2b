from pathlib import Path

from assessor.collection.importing.runs import run_import
from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand


class Command(ImportCommand):
    help = (
        "Import a run in the TREC RAG 2024 format (JSONL, one answer per line with its references, "
        "sentences and citations). Answers over 400 words are imported with a warning."
    )

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return run_import(path=path, replace=options["replace"])
