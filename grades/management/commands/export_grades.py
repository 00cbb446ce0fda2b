from collections.abc import Iterator

from assessor.management.base import ExportCommand
from grades.files import grade_lines
from grades.scoring import notes


class Command(ExportCommand):
    help = "Write a grade source's counted grades in PrefNugget's nugget-grades JSONL layout, one grade a line."

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the grade source")

    def lines(self, options: dict) -> Iterator[str]:
        return grade_lines(name=options["name"])

    def notes(self, options: dict) -> list[str]:
        return notes([(options["name"],)])[(options["name"],)]
