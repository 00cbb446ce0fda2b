from django.core.management.base import CommandError

from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job
from grades.llm import grades_job_create, grades_select


class Command(JobCommand):
    help = "PrefNugget's grades: an LLM grades every report of a topic 0-5 on every question of a bank."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--bank", required=True, help="the question bank whose questions are graded")
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")
        parser.add_argument("--runs", nargs="+", default=None, metavar="ID", help="run ids (all when absent)")
        parser.add_argument(
            "--documents",
            action="store_true",
            help="grade the documents each report cites instead of its text (a question's grade: the highest)",
        )
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print what would be graded (topic, run, question id; tab separated) and call nothing",
        )

    def handle(self, *args, **options) -> None:
        if options["dry_run"]:
            try:
                planned = grades_select(bank=options["bank"], topics=options["topics"], runs=options["runs"])
            except JobRequestInvalid as exc:
                raise CommandError(str(exc)) from None
            for grade in planned:
                self.stdout.write(f"{grade.topic_id}\t{grade.run_id}\t{grade.question_id}")
            return
        super().handle(*args, **options)

    def create_job(self, options: dict) -> Job:
        return grades_job_create(
            name=options["name"],
            bank=options["bank"],
            topics=options["topics"],
            runs=options["runs"],
            documents=options["documents"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
