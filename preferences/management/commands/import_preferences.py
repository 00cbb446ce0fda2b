from pathlib import Path

from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from preferences.checkpoint import preferences_import


class Command(ImportCommand):
    help = (
        "Import PrefNugget's preference checkpoint (JSONL: comparison records, each pair with its flipped copy, "
        "and aggregates) as a file's preference source named --name."
    )
    name_options = ("name",)

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the preference source the file's preferences go into")

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return preferences_import(path=path, name=options["name"], replace=options["replace"])
