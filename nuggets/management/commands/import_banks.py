from pathlib import Path

from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from nuggets.bankfiles import banks_import
from nuggets.models import NuggetSet


class Command(ImportCommand):
    help = (
        "Import question banks in the AutoJudge v3 NuggetBanks layout, one bank a line: "
        '{"query_id", "title_query", "format_version": "v3", "nugget_bank": {QUESTION: {"question", "question_id", '
        '"answers": {ANSWER: {"answer", "references"}}, "aggregator_type", "importance"}}} (what export_banks writes).'
    )
    name_options = ("name",)

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="name of the banks (one per topic)")
        parser.add_argument(
            "--kind",
            choices=NuggetSet.Kind.values,
            default=NuggetSet.Kind.AUTO,
            help="how the banks were made (default auto; draft: for people to post-edit)",
        )
        parser.add_argument(
            "--retire-labels",
            action="store_true",
            help="with --replace: replace banks that have labels on their questions, retiring those labels",
        )

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return banks_import(
            path=path,
            name=options["name"],
            kind=options["kind"],
            replace=options["replace"],
            retire_labels=options["retire_labels"],
        )
