from pathlib import Path

from assessor.collection.importing.topics import topics_import
from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand


class Command(ImportCommand):
    help = "Import topics from a TSV file: topic_id<TAB>query."

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return topics_import(path=path, replace=options["replace"])
