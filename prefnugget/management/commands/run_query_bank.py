from assessor.jobs.command import JobCommand
from assessor.models import Job
from prefnugget.jobs import query_bank_job_create


class Command(JobCommand):
    help = "The query-only bank: an LLM writes each topic's questions from its request alone (up to 20)."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--topics", nargs="+", default=None, metavar="ID", help="topic ids (all when absent)")

    def create_job(self, options: dict) -> Job:
        return query_bank_job_create(
            name=options["name"], topics=options["topics"], queue=options["queue"], endpoint=options["endpoint"]
        )
