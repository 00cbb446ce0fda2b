from assessor.jobs.command import JobCommand
from assessor.models import Job
from tests.verdicts.judge import verdict_job_create


class Command(JobCommand):
    help = "Answer verdicts: an LLM says whether each answer of the chosen runs answers its topic's question."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--runs", nargs="+", default=None, metavar="ID", help="run ids (all when absent)")
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")

    def create_job(self, options: dict) -> Job:
        return verdict_job_create(
            name=options["name"],
            runs=options["runs"],
            topics=options["topics"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )
