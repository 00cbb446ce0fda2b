from assessor.importing.topic_ids import command_topic_keys
from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job
from assignment.auto import auto_assign_job_create, auto_assign_rerun_create


class Command(JobCommand):
    help = "AutoAssign: an LLM labels each answer's nuggets of a nugget set, listwise, 10 per call."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--nuggets", default="", help="the nugget set name (any kind); required for a new job")
        parser.add_argument("--runs", nargs="+", default=None, metavar="ID", help="run ids (all when absent)")
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")
        parser.add_argument(
            "--rerun-stale",
            action="store_true",
            help="label again only what changed nugget lists took from the LLM assigner --name (same model and prompts)",
        )

    def create_job(self, options: dict) -> Job:
        if options["rerun_stale"]:
            return auto_assign_rerun_create(name=options["name"], queue=options["queue"])
        if not options["nuggets"]:
            raise JobRequestInvalid("--nuggets NAME is required: the nugget set to label")
        return auto_assign_job_create(
            nuggets=options["nuggets"],
            name=options["name"],
            runs=options["runs"],
            topics=command_topic_keys(options["topics"]),
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
