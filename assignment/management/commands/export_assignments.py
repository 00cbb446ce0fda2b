from collections.abc import Iterator

from assessor.management.base import ExportCommand, add_team_prefix_argument
from assignment.exporting import assignments_lines
from assignment.selectors import condition_notes


class Command(ExportCommand):
    help = "Export a condition's nugget assignment labels in NIST's format, one answer a line."

    def add_export_arguments(self, parser) -> None:
        add_team_prefix_argument(parser)
        parser.add_argument(
            "--provenance", action="store_true", help="add who or what made each label, when, and the seconds spent"
        )
        parser.add_argument("--nuggets", required=True, help="the nugget set name")
        parser.add_argument("--assigner", required=True, help="the assigner name")

    def notes(self, options: dict) -> list[str]:
        return condition_notes(nuggets=options["nuggets"], assigner=options["assigner"])

    def lines(self, options: dict) -> Iterator[str]:
        return assignments_lines(nuggets=options["nuggets"], assigner=options["assigner"], provenance=options["provenance"], team_prefix=options["team_prefix"])
