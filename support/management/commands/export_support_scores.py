from collections.abc import Iterator

from assessor.management.base import ExportCommand
from support.exporting import support_scores_lines
from support.selectors import support_scores


class Command(ExportCommand):
    help = (
        "Export a support method's weighted precision and recall as TSV: "
        "run_id, topic_id (all for the run mean), metric, value."
    )

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--method", required=True, help="the support method name")

    def lines(self, options: dict) -> Iterator[str]:
        return support_scores_lines(support_scores(method=options["method"]))
