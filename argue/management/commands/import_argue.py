from pathlib import Path

from argue.files import argue_import
from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand


class Command(ImportCommand):
    help = (
        "Import ARGUE-style judgments as export_argue writes them (one judged report a line: run_id, topic_id, "
        "sentences with their citations' support, gold answers and uncited checks) on the questions of --bank, "
        "as a file's ARGUE-style source named --name."
    )
    name_options = ("name",)

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the ARGUE-style source the file's judgments go into")
        parser.add_argument("--bank", required=True, help="the question bank the judgments are on")

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return argue_import(path=path, name=options["name"], bank=options["bank"], replace=options["replace"])
