from django.core.management.base import CommandError

from argue.llm import argue_job_create, argue_select
from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job


class Command(JobCommand):
    help = (
        "ARGUE-style judgments by an LLM: each report, cut to its request's limit, yes/no per cited document "
        "(does it support the sentence?) and per gold answer of the bank (does the sentence agree with it?)."
    )

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--bank", required=False, default="", help="the question bank to judge against")
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")
        parser.add_argument("--runs", nargs="+", default=None, metavar="ID", help="run ids (all when absent)")
        parser.add_argument(
            "--check-all",
            action="store_true",
            help="check each sentence against every gold answer, not only those whose documents it cites",
        )
        parser.add_argument(
            "--negatives",
            action="store_true",
            help="ARGUE's option: ask whether an uncited sentence is a negative assertion, and if so every gold answer",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="print how many reports would be judged and call nothing"
        )

    def handle(self, *args, **options) -> None:
        if options["resume"] is None and options["cancel"] is None and not options["bank"]:
            raise CommandError("--bank is required for a new job")
        if options["dry_run"]:
            try:
                reports = argue_select(bank=options["bank"], topics=options["topics"], runs=options["runs"])
            except JobRequestInvalid as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"{len(reports)} reports")
            return
        super().handle(*args, **options)

    def create_job(self, options: dict) -> Job:
        return argue_job_create(
            name=options["name"],
            bank=options["bank"],
            topics=options["topics"],
            runs=options["runs"],
            check_all=options["check_all"],
            negatives=options["negatives"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
