from collections.abc import Iterator

from assessor.management.base import ExportCommand
from nuggets.bankfiles import banks_lines, banks_notes


class Command(ExportCommand):
    help = "Export question banks in the AutoJudge v3 NuggetBanks layout, one bank (topic) a line."

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the banks' name")

    def notes(self, options: dict) -> list[str]:
        return banks_notes(name=options["name"])

    def lines(self, options: dict) -> Iterator[str]:
        return banks_lines(name=options["name"])
