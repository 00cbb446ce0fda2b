from collections.abc import Iterator

from assessor.management.base import ExportCommand
from assignment.exporting import scores_lines
from assignment.selectors import nugget_scores


class Command(ExportCommand):
    help = (
        "Export a condition's nugget scores (A, Astrict, V, Vstrict, W, Wstrict, L) as TSV: "
        "run_id, topic_id (all for the run mean), metric, value."
    )

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--nuggets", required=True, help="the nugget set name")
        parser.add_argument("--assigner", required=True, help="the assigner name")

    def lines(self, options: dict) -> Iterator[str]:
        return scores_lines(nugget_scores(nuggets=options["nuggets"], assigner=options["assigner"]))
