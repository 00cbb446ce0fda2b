from django.core.management.base import BaseCommand, CommandError

from assessor.collection.run_join import RunJoinRefused, runs_join


class Command(BaseCommand):
    help = (
        "Join run MERGE into run KEEP: MERGE's answers move to KEEP (their labels with them), MERGE's id "
        "becomes an alias of KEEP (later files naming it land on KEEP), and MERGE is deleted. Refused, "
        "changing nothing, when both runs answer a topic."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("keep", help="the run that stays (its id, an alias, or a team-prefixed form)")
        parser.add_argument("merge", help="the run whose answers move and whose id becomes an alias")

    def handle(self, *args, **options) -> None:
        try:
            result = runs_join(keep=options["keep"], merge=options["merge"], by=None)
        except RunJoinRefused as refusal:
            raise CommandError(f"{refusal}\nNothing was changed.") from None
        self.stdout.write(f"Joined run {result.merge} into {result.keep}.")
        self.stdout.write(f"answers moved: {result.answers}")
        for topic in result.topics:
            self.stdout.write(f"  topic {topic}: 1 answer")
        self.stdout.write(f"alias created: {result.alias} -> {result.keep}")
        for alias in result.repointed:
            self.stdout.write(f"alias re-pointed: {alias} -> {result.keep}")
