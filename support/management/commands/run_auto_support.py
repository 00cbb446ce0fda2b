from assessor.importing.topic_ids import command_topic_keys
from assessor.jobs.command import JobCommand
from assessor.models import Job
from support.auto import auto_support_job_create


class Command(JobCommand):
    help = "Automatic support: an LLM labels each (sentence, first cited segment) pair FS, PS or NS."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--runs", nargs="+", default=None, metavar="ID", help="run ids (all when absent)")
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")

    def create_job(self, options: dict) -> Job:
        return auto_support_job_create(
            name=options["name"],
            runs=options["runs"],
            topics=command_topic_keys(options["topics"]),
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
