from pathlib import Path

from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from assignment.importing import NUGGET_KINDS, assignments_import
from assignment.models import AssignmentLabel


class Command(ImportCommand):
    help = (
        "Import nugget assignments (NIST's TREC 2024 RAG file, or the nuggetizer's assigned output): "
        "one answer a line with its topic's nuggets and their labels."
    )
    name_options = ("nuggets_name", "assigner_name")

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--nuggets", required=True, choices=NUGGET_KINDS, help="how the nuggets were made")
        parser.add_argument(
            "--assigner", required=True, choices=AssignmentLabel.AssignerKind.values, help="who labeled them"
        )
        parser.add_argument("--nuggets-name", default=None, help="name of the nugget sets (default: the kind)")
        parser.add_argument("--assigner-name", default=None, help="name of the assigner (default: the kind)")
        parser.add_argument(
            "--run-id", default=None,
            help="the run of every answer, for a file of one run's answers without run ids (the nuggetizer's output)",
        )  # fmt: skip
        parser.add_argument(
            "--retire-labels",
            action="store_true",
            help="with --replace: replace nugget lists that have labels on them, retiring those labels",
        )

    def run_import(self, path: Path, options: dict) -> ImportResult:
        return assignments_import(
            path=path,
            nuggets=options["nuggets"],
            assigner=options["assigner"],
            nuggets_name=options["nuggets_name"],
            assigner_name=options["assigner_name"],
            replace=options["replace"],
            retire_labels=options["retire_labels"],
            run_id=options["run_id"],
        )
