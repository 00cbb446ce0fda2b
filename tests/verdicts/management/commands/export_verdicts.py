from django.core.management.base import BaseCommand, CommandError

from tests.verdicts.exporting import verdict_lines


class Command(BaseCommand):
    help = "Write a verdict source's counted verdicts as JSONL, with who or what made each."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the verdict source")

    def handle(self, *args, **options) -> None:
        try:
            for line in verdict_lines(name=options["name"]):
                self.stdout.write(line, ending="")
        except LookupError as exc:
            raise CommandError(str(exc)) from None
