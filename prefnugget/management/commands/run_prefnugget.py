from django.core.management.base import CommandError

from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job
from prefnugget.jobs import prefnugget_job_create, prefnugget_plan


class Command(JobCommand):
    help = "PrefNugget's banks: an LLM extracts the questions each winner answers better than its loser."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument(
            "--preferences", required=True, metavar="NAME", help="the preference source whose pairs are used"
        )
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print the pairs in processing order (topic, batch, winner, loser, score; tab separated) "
            "and call nothing",
        )

    def handle(self, *args, **options) -> None:
        if options["dry_run"]:
            try:
                plan = prefnugget_plan(preferences=options["preferences"], topics=options["topics"])
            except JobRequestInvalid as exc:
                raise CommandError(str(exc)) from None
            for topic_id, pairs in plan.items():
                for position, planned in enumerate(pairs):
                    pair = planned.pair
                    self.stdout.write(f"{topic_id}\t{position // 2}\t{pair.winner}\t{pair.loser}\t{pair.score:g}")
            return
        super().handle(*args, **options)

    def create_job(self, options: dict) -> Job:
        return prefnugget_job_create(
            name=options["name"],
            preferences=options["preferences"],
            topics=options["topics"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
