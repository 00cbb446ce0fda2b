from collections.abc import Iterator

from assessor.collection.score_formats import score_table_lines
from assessor.management.base import ExportCommand, add_score_layout_arguments
from support.selectors import method_notes, support_scores


class Command(ExportCommand):
    help = (
        "Export a support method's weighted precision and recall as TSV: "
        "run_id, topic_id (all for the run mean), metric, value; or in the trec_eval layout."
    )

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--method", required=True, help="the support method name")
        add_score_layout_arguments(parser)

    def notes(self, options: dict) -> list[str]:
        return method_notes(method=options["method"])

    def lines(self, options: dict) -> Iterator[str]:
        scores = support_scores(method=options["method"])
        return score_table_lines(scores, layout=options["format"], team_prefix=options["team_prefix"])
