from collections.abc import Iterator

from django.core.management.base import CommandError

from assessor.management.base import ScoresExportCommand
from assessor.scoring.scores import Scores
from grades.files import grade_lines
from grades.scoring import grade_scores, notes

# The score file options and their defaults (assessor.management.base.add_score_layout_arguments): they shape
# a score table, so they are refused on the grades themselves.
SCORE_FILE_DEFAULTS = {"format": "tsv", "zero_rows": False, "run": "", "team_prefix": False}


class Command(ScoresExportCommand):
    help = (
        "Write a grade source's counted grades in PrefNugget's nugget-grades JSONL layout, one grade a line; with "
        "--scores, its scores: each report's measures and each run's mean over every request (topic all), as TSV "
        "run_id, topic_id, metric, value, or in another score layout (--format)."
    )

    def add_source_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the grade source")
        parser.add_argument(
            "--scores",
            action="store_true",
            help="write the source's scores (every measure at every grade threshold, per report and the run's all "
            "rows) instead of its grades",
        )

    def lines(self, options: dict) -> Iterator[str]:
        if options["scores"]:
            return super().lines(options)
        given = [option for option, default in SCORE_FILE_DEFAULTS.items() if options[option] != default]
        if given:
            shown = ", ".join("--" + option.replace("_", "-") for option in given)
            raise CommandError(f"{shown}: options of a score file, which only --scores writes")
        return grade_lines(name=options["name"])

    def scores(self, options: dict) -> Scores:
        return grade_scores(name=options["name"])

    def notes(self, options: dict) -> list[str]:
        return notes([(options["name"],)])[(options["name"],)]
