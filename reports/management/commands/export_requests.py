from collections.abc import Iterator

from assessor.management.base import ExportCommand
from reports.exporting import requests_lines


class Command(ExportCommand):
    help = "Export the report requests as AutoJudge JSONL, one request a line."

    def lines(self, options: dict) -> Iterator[str]:
        return requests_lines()
