from pathlib import Path

from assessor.collection.importing.segments import segments_import
from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand


class Command(ImportCommand):
    help = (
        'Import segments from JSONL: {"docid", "segment" (or "contents" or "text"), "title"?, "url"?}. '
        "Fills in the text of segments that qrels or runs named before."
    )

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return segments_import(path=path, replace=options["replace"])
