from collections.abc import Iterator

from assessor.collection.exporting import qrels_lines
from assessor.management.base import ExportCommand


class Command(ExportCommand):
    help = "Export the qrels of a source as TREC qrels: topic_id Q0 docid grade."

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--source", required=True, help="the qrels source name (nist, umbrela, ...)")

    def lines(self, options: dict) -> Iterator[str]:
        return qrels_lines(source=options["source"])
