from django.core.management.base import BaseCommand, CommandError

from argue.exporting import argue_lines


class Command(BaseCommand):
    help = "Write an ARGUE-style source's counted judgments as JSONL, one judged report a line."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", required=True, help="the ARGUE-style source")
        parser.add_argument("--output", default="", help="the file to write (default: standard output)")

    def handle(self, *args, **options) -> None:
        try:
            lines = list(argue_lines(name=options["name"]))
        except LookupError as exc:
            raise CommandError(str(exc.args[0])) from None
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8") as out:
                out.writelines(lines)
            self.stdout.write(f"{len(lines)} reports -> {options['output']}")
        else:
            self.stdout.write("".join(lines), ending="")
