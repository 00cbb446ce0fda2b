from collections.abc import Iterator

from assessor.management.base import ExportCommand
from preferences.checkpoint import checkpoint_lines
from preferences.scoring import notes


class Command(ExportCommand):
    help = (
        "Write a preference source's counted preferences as PrefNugget's checkpoint (JSONL): each decided pair and "
        "its flipped copy, then each report's Borda aggregate. The reference loads it to build its banks."
    )

    def add_export_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the preference source")

    def lines(self, options: dict) -> Iterator[str]:
        return checkpoint_lines(name=options["name"])

    def notes(self, options: dict) -> list[str]:
        return notes([(options["name"],)])[(options["name"],)]
