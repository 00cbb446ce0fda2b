from collections.abc import Iterator

from assessor.management.base import ExportCommand
from nuggets.exporting import nugget_set_names, nuggets_lines, nuggets_notes


class Command(ExportCommand):
    help = 'Export nugget sets in the nuggetizer format: {"qid", "query", "nuggets": [{"text", "importance"}]} a line.'

    def add_export_arguments(self, parser) -> None:
        parser.add_argument(
            "--nuggets", default=None, help="the nugget set name (may be left out when the collection has one)"
        )

    def notes(self, options: dict) -> list[str]:
        names = [options["nuggets"]] if options["nuggets"] else nugget_set_names()
        return nuggets_notes(name=names[0]) if len(names) == 1 else []

    def lines(self, options: dict) -> Iterator[str]:
        name = options["nuggets"]
        if name is None:
            names = nugget_set_names()
            if len(names) != 1:
                known = ", ".join(names) or "none"
                raise LookupError(f"choose the nugget sets with --nuggets NAME; nugget sets: {known}")
            name = names[0]
        return nuggets_lines(name=name)
