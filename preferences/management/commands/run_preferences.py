from django.core.management.base import CommandError

from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job
from assessor.models.keys import published_id
from preferences.llm import preferences_job_create, preferences_select


class Command(JobCommand):
    help = "PrefNugget's preferences: an LLM compares sampled pairs of each topic's reports (ties allowed by default)."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")
        parser.add_argument("--runs", nargs="+", default=None, metavar="ID", help="run ids (all when absent)")
        parser.add_argument("--must-decide", action="store_true", help="the prompt that allows no ties (1 or 2)")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print the pairs that would be judged (topic, run 1, run 2; tab separated) and call nothing",
        )

    def handle(self, *args, **options) -> None:
        if options["dry_run"]:
            try:
                pairs = preferences_select(topics=options["topics"], runs=options["runs"])
            except JobRequestInvalid as exc:
                raise CommandError(str(exc)) from None
            for pair in pairs:
                self.stdout.write(f"{published_id(pair.topic_id)}\t{pair.first_run}\t{pair.second_run}")
            return
        super().handle(*args, **options)

    def create_job(self, options: dict) -> Job:
        return preferences_job_create(
            name=options["name"],
            topics=options["topics"],
            runs=options["runs"],
            must_decide=options["must_decide"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
