from collections.abc import Iterator

from argue.exporting import argue_export_notes, argue_lines
from assessor.management.base import ExportCommand


class Command(ExportCommand):
    help = "Write an ARGUE-style source's counted judgments as JSONL, one judged report a line."

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the ARGUE-style source")

    def lines(self, options: dict) -> Iterator[str]:
        return argue_lines(name=options["name"])

    def notes(self, options: dict) -> list[str]:
        return argue_export_notes(name=options["name"])
