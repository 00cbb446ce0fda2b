from collections.abc import Iterator

from django.core.management.base import CommandError

from argue.exporting import argue_export_notes, argue_lines
from argue.scoring import argue_scores, argue_scores_from_labels, notes
from assessor.management.base import ScoresExportCommand
from assessor.scoring.scores import Scores

# The score file options and their defaults (assessor.management.base.add_score_layout_arguments): they shape
# a score table, so they are refused on the judgments themselves.
SCORE_FILE_DEFAULTS = {"format": "tsv", "zero_rows": False, "run": "", "team_prefix": False, "skip_missing": False}


class Command(ScoresExportCommand):
    help = (
        "Write an ARGUE-style source's counted judgments as JSONL, one judged report a line (what import_argue "
        "reads); with --scores, its scores: each report's figures and each run's all rows (macro means and _micro "
        "figures), as TSV run_id, topic_id, metric, value, or in another score layout (--format)."
    )

    def add_source_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the ARGUE-style source")
        parser.add_argument("--scores", action="store_true", help="write the source's scores instead of its judgments")
        parser.add_argument(
            "--skip-missing",
            action="store_true",
            help="with --scores: leave a run's missing reports out of its means (by default they count 0)",
        )

    def lines(self, options: dict) -> Iterator[str]:
        if options["scores"]:
            return super().lines(options)
        given = [option for option, default in SCORE_FILE_DEFAULTS.items() if options[option] != default]
        if given:
            shown = ", ".join("--" + option.replace("_", "-") for option in given)
            raise CommandError(f"{shown}: options of a score file, which only --scores writes")
        return argue_lines(name=options["name"])

    def scores(self, options: dict) -> Scores:
        if options["skip_missing"]:
            return argue_scores_from_labels(name=options["name"], skip_missing=True)
        return argue_scores(name=options["name"])

    def notes(self, options: dict) -> list[str]:
        if options["scores"]:
            return notes([(options["name"],)])[(options["name"],)]
        return argue_export_notes(name=options["name"])
