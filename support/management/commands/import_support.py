from pathlib import Path

from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from support.importing import support_import
from support.models import SupportLabel


class Command(ImportCommand):
    help = (
        "Import support judgments (NIST's final.citation_judgments_*.jsonl, or the sentenceId/citationId variant): "
        "one answer a line with its sentences, citations and support labels."
    )
    name_options = ("name",)

    def add_import_arguments(self, parser) -> None:
        parser.add_argument(
            "--method", required=True, choices=SupportLabel.MethodKind.values, help="how the labels were made"
        )
        parser.add_argument("--name", default=None, help="name of the support method (default: the kind)")

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return support_import(
            path=path, method=options["method"], method_name=options["name"], replace=options["replace"]
        )
