from pathlib import Path

from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from metaeval.importing import scores_import


class Command(ImportCommand):
    help = (
        "Import a score table (run_id topic_id metric value, as export_scores writes it, or with --format "
        "trec_eval: run measure topic value, or trec_eval -q's measure topic value; `all` rows are run means) "
        "to compare as the source scores:NAME."
    )

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the table's name (a slug)")
        parser.add_argument("--format", choices=("tsv", "trec_eval"), default="tsv", help="the file's layout")
        parser.add_argument(
            "--run-id", default=None,
            help="the run every row belongs to (needed for trec_eval's three columns without a runid row)",
        )  # fmt: skip

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return scores_import(
            path=path, name=options["name"], replace=options["replace"], layout=options["format"], run_id=options["run_id"]
        )
