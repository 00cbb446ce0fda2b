from assessor.management.base import ScoresExportCommand
from assessor.scoring.scores import Scores
from assignment.selectors import condition_notes, nugget_scores


class Command(ScoresExportCommand):
    help = (
        "Export a condition's nugget scores (A, Astrict, V, Vstrict, W, Wstrict, L) as TSV: "
        "run_id, topic_id (all for the run mean), metric, value; or in the tot, ir_measures or trec_eval layout."
    )

    def add_source_arguments(self, parser) -> None:
        parser.add_argument("--nuggets", required=True, help="the nugget set name")
        parser.add_argument("--assigner", required=True, help="the assigner name")

    def notes(self, options: dict) -> list[str]:
        return condition_notes(nuggets=options["nuggets"], assigner=options["assigner"])

    def scores(self, options: dict) -> Scores:
        return nugget_scores(nuggets=options["nuggets"], assigner=options["assigner"])
