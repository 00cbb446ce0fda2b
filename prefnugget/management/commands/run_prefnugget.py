from django.core.management.base import CommandError

from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job
from assessor.models.keys import published_id
from prefnugget.contrastive import MAX_PAIRS
from prefnugget.jobs import Pairing, prefnugget_job_create, prefnugget_plan


class Command(JobCommand):
    help = "PrefNugget's banks: an LLM extracts the questions each winner answers better than its loser."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument(
            "--preferences", default="", metavar="NAME", help="the preference source whose pairs are used"
        )
        parser.add_argument(
            "--random-pairs",
            action="store_true",
            help="instead of a preference source, every pair of a topic's reports in a shuffled order, the earlier "
            "shown as the winner (the reference's variant 'random')",
        )
        parser.add_argument(
            "--seed",
            default="",
            metavar="TEXT",
            help="with --random-pairs: the seed of the shuffle (default: the reference's, each topic's id)",
        )
        parser.add_argument(
            "--max-pairs",
            type=int,
            default=MAX_PAIRS,
            metavar="N",
            help=f"the most pairs a topic's questions are asked from (default: {MAX_PAIRS}, as the reference)",
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
                plan = prefnugget_plan(topics=options["topics"], pairing=_pairing(options))
            except JobRequestInvalid as exc:
                raise CommandError(str(exc)) from None
            for topic_id, pairs in plan.items():
                for position, planned in enumerate(pairs):
                    pair = planned.pair
                    self.stdout.write(
                        f"{published_id(topic_id)}\t{position // 2}\t{pair.winner}\t{pair.loser}\t{pair.score:g}"
                    )
            return
        super().handle(*args, **options)

    def create_job(self, options: dict) -> Job:
        return prefnugget_job_create(
            name=options["name"],
            preferences=options["preferences"],
            random_pairs=options["random_pairs"],
            seed=options["seed"],
            max_pairs=options["max_pairs"],
            topics=options["topics"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )


def _pairing(options: dict) -> Pairing:
    return Pairing(options["preferences"], options["random_pairs"], options["seed"], options["max_pairs"])
