from collections.abc import Iterator

from assessor.collection.score_formats import score_table_lines
from assessor.management.base import ExportCommand, add_score_layout_arguments
from assignment.selectors import condition_notes, nugget_scores


class Command(ExportCommand):
    help = (
        "Export a condition's nugget scores (A, Astrict, V, Vstrict, W, Wstrict, L) as TSV: "
        "run_id, topic_id (all for the run mean), metric, value; or in the trec_eval layout."
    )

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--nuggets", required=True, help="the nugget set name")
        parser.add_argument("--assigner", required=True, help="the assigner name")
        add_score_layout_arguments(parser)

    def notes(self, options: dict) -> list[str]:
        return condition_notes(nuggets=options["nuggets"], assigner=options["assigner"])

    def lines(self, options: dict) -> Iterator[str]:
        scores = nugget_scores(nuggets=options["nuggets"], assigner=options["assigner"])
        return score_table_lines(scores, layout=options["format"], team_prefix=options["team_prefix"])
