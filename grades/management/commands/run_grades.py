from django.core.management.base import CommandError

from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job
from assessor.models.keys import published_id
from grades.llm import DEFAULT_GATE, grades_job_create, grades_rerun_create, grades_select


class Command(JobCommand):
    help = "PrefNugget's grades: an LLM grades every report of a topic 0-5 on every question of a bank."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--bank", default="", help="the question bank whose questions are graded (a new job)")
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")
        parser.add_argument("--runs", nargs="+", default=None, metavar="ID", help="run ids (all when absent)")
        parser.add_argument(
            "--documents",
            action="store_true",
            help="grade the documents each report cites instead of its text (a question's grade: the highest)",
        )
        parser.add_argument(
            "--report-and-documents",
            action="store_true",
            help="grade the report, then the documents it cites on each question whose report grade reaches --gate "
            "(a question scores the report's grade times its best document's, 0-25)",
        )
        parser.add_argument(
            "--gate",
            type=int,
            default=DEFAULT_GATE,
            help=f"with --report-and-documents: the report grade from which its documents are graded (default "
            f"{DEFAULT_GATE})",
        )
        parser.add_argument(
            "--rerun-stale",
            action="store_true",
            help="grade only the questions changed since the LLM grade source --name graded their bank (its model "
            "and prompt)",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print what would be graded (topic, run, question id; tab separated) and call nothing",
        )

    def handle(self, *args, **options) -> None:
        if options["dry_run"]:
            if not options["bank"]:
                raise CommandError("--bank BANK is required: the question bank to grade on")
            try:
                planned = grades_select(bank=options["bank"], topics=options["topics"], runs=options["runs"])
            except JobRequestInvalid as exc:
                raise CommandError(str(exc)) from None
            for grade in planned:
                self.stdout.write(f"{published_id(grade.topic_id)}\t{grade.run_id}\t{grade.question_id}")
            return
        super().handle(*args, **options)

    def create_job(self, options: dict) -> Job:
        if options["rerun_stale"]:
            return grades_rerun_create(name=options["name"], queue=options["queue"])
        if not options["bank"]:
            raise JobRequestInvalid("--bank BANK is required: the question bank to grade on")
        return grades_job_create(
            name=options["name"],
            bank=options["bank"],
            topics=options["topics"],
            runs=options["runs"],
            documents=options["documents"],
            report_and_documents=options["report_and_documents"],
            gate=options["gate"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
