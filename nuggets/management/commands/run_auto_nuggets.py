from assessor.importing.topic_ids import command_topic_keys
from assessor.jobs.command import JobCommand
from assessor.models import Job
from nuggets.auto import auto_nuggets_job_create


class Command(JobCommand):
    help = (
        "AutoNuggets for the chosen topics from the segments a qrels source grades >= 1; "
        "with --drafts, the 30 drafts (without importance) that assessors post-edit."
    )

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all judged topics when absent)")
        parser.add_argument("--qrels", default="nist", help="the qrels source whose relevant segments are read (default nist)")
        parser.add_argument("--drafts", action="store_true", help="stop after creation: 30 drafts, no importance")

    def create_job(self, options: dict) -> Job:
        return auto_nuggets_job_create(
            name=options["name"],
            qrels=options["qrels"],
            topics=command_topic_keys(options["topics"]),
            drafts=options["drafts"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
