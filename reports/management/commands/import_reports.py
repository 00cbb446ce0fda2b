from pathlib import Path

from django.core.management.base import CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.importing.base import ImportFailure, statistics_refresh
from reports.importing import reports_import
from reports.layout import reports_parse


class Command(CampaignCommand):
    campaign_writes = True
    help = (
        "Import reports in the AutoJudge layout (JSONL, one report a line: metadata with team_id, run_id and "
        "topic_id; responses with their citations; optional references and documents). Every file is read and "
        "checked first; then each is imported whole or not at all."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("paths", type=Path, nargs="+", metavar="FILE")
        parser.add_argument("--replace", action="store_true", help="overwrite stored reports the files contradict")

    def handle(self, *args, **options) -> None:
        paths: list[Path] = options["paths"]
        try:
            for path in paths:
                for _ in reports_parse(path):
                    pass
        except ImportFailure as failure:
            raise CommandError(f"{failure}\nNothing was imported.") from None
        done: list[Path] = []
        for path in paths:
            try:
                result = reports_import(path=path, replace=options["replace"])
            except ImportFailure as failure:
                imported = f"Imported before it: {', '.join(map(str, done))}." if done else "Nothing was imported."
                raise CommandError(f"{failure}\n{path} was not imported. {imported}") from None
            done.append(path)
            statistics_refresh(result)
            for warning in result.warnings:
                self.stderr.write(f"warning: {warning}")
            self.stdout.write(result.summary())
