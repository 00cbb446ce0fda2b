from pathlib import Path

from assessor.collection.score_formats import LAYOUTS
from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from metaeval.importing import scores_import


class Command(ImportCommand):
    help = (
        "Import a score table to compare as the source scores:NAME: run_id topic_id metric value as export_scores "
        "writes it, or another layout (--format); `all` rows are run means."
    )
    name_options = ("name",)

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the table's name (a slug)")
        parser.add_argument(
            "--format", choices=tuple(LAYOUTS), default="tsv",
            help="the file's layout; " + "; ".join(f"{name}: {columns}" for name, columns in LAYOUTS.items()),
        )  # fmt: skip
        parser.add_argument(
            "--run-id", default=None,
            help="the run every row belongs to (needed for a one-run file of three columns without a runid row)",
        )  # fmt: skip

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return scores_import(
            path=path,
            name=options["name"],
            replace=options["replace"],
            layout=options["format"],
            run_id=options["run_id"],
        )
