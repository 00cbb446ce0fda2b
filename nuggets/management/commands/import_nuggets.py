from pathlib import Path

from django.core.management.base import CommandError

from assessor.importing.base import ImportResult
from assessor.management.base import ImportCommand
from nuggets.importing import nuggets_import
from nuggets.models import NuggetSet

FINAL_KINDS = [kind for kind in NuggetSet.Kind.values if kind != NuggetSet.Kind.DRAFT]


class Command(ImportCommand):
    help = (
        'Import nugget lists, one topic a line: {"qid", "query", "nuggets": [{"text", "importance"}]} '
        "(the nuggetizer's format, and what export_nuggets writes)."
    )
    name_options = ("name",)

    def add_import_arguments(self, parser) -> None:
        parser.add_argument("--kind", choices=FINAL_KINDS, help="how the nuggets were made (required unless --drafts)")
        parser.add_argument(
            "--drafts", action="store_true", help="LLM drafts for post-editing: no importance, at most 30 a topic"
        )
        parser.add_argument("--name", default=None, help="name of the nugget sets (default: the kind, or 'draft')")
        parser.add_argument(
            "--retire-labels",
            action="store_true",
            help=(
                "with --replace: replace lists that have labels on them, retiring those labels (kept, not scored), "
                "and drafts being post-edited, keeping them as NAME-replaced-N"
            ),
        )

    def run_import(self, path: Path, options: dict) -> ImportResult:
        if options["drafts"] == bool(options["kind"]):
            raise CommandError("give either --kind KIND or --drafts")
        kind = NuggetSet.Kind.DRAFT if options["drafts"] else options["kind"]
        return nuggets_import(
            path=path,
            kind=kind,
            name=options["name"],
            replace=options["replace"],
            retire_labels=options["retire_labels"],
        )
