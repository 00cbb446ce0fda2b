from collections.abc import Iterator

from assessor.collection.exporting import run_lines
from assessor.management.base import ExportCommand


class Command(ExportCommand):
    help = "Export a run in the TREC RAG 2024 format: one answer a line, with references, sentences and citations."

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--run", required=True, help="the run id, as stored")

    def lines(self, options: dict) -> Iterator[str]:
        return run_lines(run_id=options["run"])
