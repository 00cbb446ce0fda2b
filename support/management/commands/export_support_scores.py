from assessor.management.base import ScoresExportCommand
from assessor.scoring.scores import Scores
from support.selectors import method_notes, support_scores


class Command(ScoresExportCommand):
    help = (
        "Export a support method's weighted precision and recall as TSV: "
        "run_id, topic_id (all for the run mean), metric, value; or in the tot, ir_measures or trec_eval layout."
    )

    def add_source_arguments(self, parser) -> None:
        parser.add_argument("--method", required=True, help="the support method name")

    def notes(self, options: dict) -> list[str]:
        return method_notes(method=options["method"])

    def scores(self, options: dict) -> Scores:
        return support_scores(method=options["method"])
