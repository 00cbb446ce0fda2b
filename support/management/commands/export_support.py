from collections.abc import Iterator

from assessor.management.base import ExportCommand, add_team_prefix_argument
from support.exporting import support_lines
from support.selectors import method_notes


class Command(ExportCommand):
    help = "Export a support method's labels in NIST's support format, one answer a line."

    def add_export_arguments(self, parser) -> None:
        add_team_prefix_argument(parser)
        parser.add_argument(
            "--provenance", action="store_true", help="add who or what made each label, when, and the seconds spent"
        )
        parser.add_argument("--method", required=True, help="the support method name")

    def notes(self, options: dict) -> list[str]:
        return method_notes(method=options["method"])

    def lines(self, options: dict) -> Iterator[str]:
        return support_lines(method=options["method"], provenance=options["provenance"], team_prefix=options["team_prefix"])
