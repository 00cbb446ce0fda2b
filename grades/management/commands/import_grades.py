from pathlib import Path

from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from grades.files import grades_import


class Command(ImportCommand):
    help = (
        "Import grades in PrefNugget's nugget-grades JSONL layout (run_id, query_id, nugget_id or question, grade "
        "0-5) on the questions of --bank, as a file's grade source named --name."
    )
    name_options = ("name",)

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the grade source the file's grades go into")
        parser.add_argument("--bank", required=True, help="the question bank the grades are on")

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return grades_import(path=path, name=options["name"], bank=options["bank"], replace=options["replace"])
