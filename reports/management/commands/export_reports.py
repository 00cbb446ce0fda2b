from collections.abc import Iterator

from assessor.management.base import ExportCommand
from reports.exporting import reports_lines


class Command(ExportCommand):
    help = (
        "Export reports in the AutoJudge layout, one report a line, each in the citation shape it was imported in "
        "(an answer of a TREC RAG run: citations by index into its references)."
    )

    def add_export_arguments(self, parser) -> None:
        parser.add_argument(
            "--run", action="append", default=[], dest="runs", help="a run id (repeat; default all runs)"
        )
        parser.add_argument("--no-documents", action="store_true", help="leave out the texts of the cited documents")

    def lines(self, options: dict) -> Iterator[str]:
        return reports_lines(run_ids=options["runs"], documents=not options["no_documents"])
