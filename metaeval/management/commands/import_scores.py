from pathlib import Path

from assessor.collection.importing.base import ImportResult
from assessor.management.base import ImportCommand
from metaeval.importing import scores_import


class Command(ImportCommand):
    help = (
        "Import a score table (run_id topic_id metric value, as export_scores writes it; `all` rows are run "
        "means) to compare as the source scores:NAME."
    )

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the table's name (a slug)")

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return scores_import(path=path, name=options["name"], replace=options["replace"])
