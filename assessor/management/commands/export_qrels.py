from collections.abc import Iterator

from assessor.collection.exporting import qrels_lines
from assessor.management.base import ExportCommand
from assessor.scoring.lifecycle import qrels_notes


class Command(ExportCommand):
    help = "Export the qrels of a source as TREC qrels: topic_id Q0 docid grade."

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--source", required=True, help="the qrels source name (nist, umbrela, ...)")

    def notes(self, options: dict) -> list[str]:
        # The LLM job that writes the source, while it runs or once it failed on some items.
        return qrels_notes([options["source"]])

    def lines(self, options: dict) -> Iterator[str]:
        return qrels_lines(source=options["source"])
