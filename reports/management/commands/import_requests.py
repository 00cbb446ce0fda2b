from pathlib import Path

from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from reports.importing import requests_import


class Command(ImportCommand):
    help = (
        "Import report requests (AutoJudge JSONL: request_id, title, background, problem_statement, limit or "
        "word_limit). Each request is a topic whose query is its title; a stored topic with that query gains the request."
    )

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return requests_import(path=path, replace=options["replace"])
