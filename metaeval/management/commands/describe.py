import json

from django.core.management.base import CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.management.base import add_include_open_argument, notes_write
from assessor.scoring.lifecycle import open_work_included
from metaeval.comparison import describe_json
from metaeval.sources import SourceError, sources_notes


def _cell(value: float | int) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


class Command(CampaignCommand):
    help = "Descriptive statistics of score sources (NUGGETS/ASSIGNER, support:METHOD, scores:NAME), the study's table."

    def add_arguments(self, parser) -> None:
        parser.add_argument("sources", nargs="+", metavar="SRC")
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")
        add_include_open_argument(parser)

    def handle(self, *args, **options) -> None:
        with open_work_included(options["include_open"]):
            self._handle(options)

    def _handle(self, options: dict) -> None:
        try:
            described = describe_json(options["sources"])
        except SourceError as exc:
            raise CommandError(str(exc)) from None
        notes_write(self, sources_notes(options["sources"]))
        if options["json"]:
            self.stdout.write(json.dumps(described, indent=2))
            return
        width = max(len(source) for source in described) + 2
        previous_columns = None
        for source, values in described.items():
            columns = list(values)
            if columns != previous_columns:
                self.stdout.write(f"{'source':<{width}}" + "".join(f"{column:>21}" for column in columns))
                previous_columns = columns
            self.stdout.write(f"{source:<{width}}" + "".join(f"{_cell(value):>21}" for value in values.values()))
