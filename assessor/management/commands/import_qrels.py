from pathlib import Path

from assessor.collection.importing.qrels import qrels_import
from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand


class Command(ImportCommand):
    help = "Import TREC qrels (topic_id Q0 docid grade, grades 0-3) as the relevance grades of a named source."
    name_options = ("source",)

    def add_import_arguments(self, parser) -> None:
        parser.add_argument(
            "--source", required=True, help="who graded: nist (people), umbrela (an LLM judge), or any name"
        )

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return qrels_import(path=path, source=options["source"], replace=options["replace"])
