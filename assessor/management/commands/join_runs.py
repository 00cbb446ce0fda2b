from django.core.management.base import CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.collection.run_join import RunJoinRefused, runs_join


def _choice(text: str) -> tuple[str, str]:
    topic, sep, run = text.partition("=")
    if not sep or not topic.strip() or not run.strip():
        raise CommandError(f"--answer wants TOPIC=RUN (the run whose answer the joined run keeps), not {text!r}")
    return topic.strip(), run.strip()


class Command(CampaignCommand):
    campaign_writes = True
    help = (
        "Join run MERGE into run KEEP: MERGE's answers move to KEEP (their labels with them), MERGE's id "
        "becomes an alias of KEEP (later files naming it land on KEEP), and MERGE is deleted. Where both "
        "answer a topic with the same answer (one answer imported twice), the two are combined; where their "
        "answers differ, --answer TOPIC=RUN says whose answer the run keeps, the other set aside in the "
        "join's history. Refused, changing nothing, while such a topic has no choice."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("keep", help="the run that stays (its id, an alias, or a team-prefixed form)")
        parser.add_argument("merge", help="the run whose answers move and whose id becomes an alias")
        parser.add_argument(
            "--answer",
            action="append",
            default=[],
            metavar="TOPIC=RUN",
            help="for a topic both runs answer differently: the run (KEEP or MERGE) whose answer is kept",
        )

    def handle(self, *args, **options) -> None:
        choices = dict(_choice(text) for text in options["answer"])
        try:
            result = runs_join(keep=options["keep"], merge=options["merge"], by=None, choices=choices)
        except RunJoinRefused as refusal:
            raise CommandError(f"{refusal}\nNothing was changed.") from None
        self.stdout.write(f"Joined run {result.merge} into {result.keep}.")
        self.stdout.write(f"answers moved: {result.answers}")
        for topic in result.topics:
            self.stdout.write(f"  topic {topic}: 1 answer")
        for topic in result.combined:
            self.stdout.write(f"  topic {topic}: the same answer in both runs, combined (every label kept)")
        for topic, run in sorted(result.set_aside.items()):
            self.stdout.write(f"  topic {topic}: {run}'s answer set aside in the join's history")
        self.stdout.write(f"alias created: {result.alias} -> {result.keep}")
        for alias in result.repointed:
            self.stdout.write(f"alias re-pointed: {alias} -> {result.keep}")
