from django.core.management.base import CommandError

from assessor.jobs.command import JobCommand
from assessor.jobs.engine import JobRequestInvalid
from assessor.models import Job
from assessor.models.keys import published_id
from crucible.llm import CHUNKS, DOCUMENTS, crucible_job_create, crucible_plan
from crucible.models import CrucibleRun, Variant


class Command(JobCommand):
    help = "Crucible: a run written from a question bank (the run's id is --name), one call per question and chunk."

    def add_selection_arguments(self, parser) -> None:
        parser.add_argument("--bank", help="the question bank's name (required for a new job)")
        parser.add_argument(
            "--topics", nargs="+", default=None, metavar="ID", help="topic ids (all the bank's when absent)"
        )
        parser.add_argument("--variant", choices=Variant.values, default=Variant.ABSTRACTIVE)
        parser.add_argument(
            "--length", choices=["short", "long"], default="short", help="each question's best 1 (short) or 5 (long)"
        )
        parser.add_argument("--documents", type=int, default=DOCUMENTS, help="documents retrieved per topic")
        parser.add_argument("--chunks", type=int, default=CHUNKS, help="chunks read per topic")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print each topic's chunks (topic, rank, document, characters; tab separated) and call nothing",
        )

    def handle(self, *args, **options) -> None:
        if options["dry_run"]:
            try:
                banks, chunked = crucible_plan(
                    bank=options["bank"] or "",
                    topics=options["topics"],
                    documents=options["documents"],
                    chunks=options["chunks"],
                )
            except JobRequestInvalid as exc:
                raise CommandError(str(exc)) from None
            for topic_id, found in chunked.items():
                for rank, (docid, text) in enumerate(found):
                    self.stdout.write(f"{published_id(topic_id)}\t{rank}\t{docid}\t{len(text)}")
            calls = sum(len(banks[topic_id]) * len(found) for topic_id, found in chunked.items())
            self.stdout.write(f"{calls} calls: {len(chunked)} topics, their questions x their chunks")
            return
        super().handle(*args, **options)

    def create_job(self, options: dict) -> Job:
        return crucible_job_create(
            name=options["name"],
            bank=options["bank"] or "",
            topics=options["topics"],
            variant=options["variant"],
            length=options["length"],
            documents=options["documents"],
            chunks=options["chunks"],
            queue=options["queue"],
            endpoint=options["endpoint"],
        )

    def _report_failures(self, job: Job) -> None:
        super()._report_failures(job)
        crucible = CrucibleRun.objects.filter(job=job).first()
        if crucible is None:
            return
        if crucible.error:
            self.stderr.write(f"no run: {crucible.error}")
        elif crucible.run_name and crucible.run is not None:
            self.stdout.write(f"run {crucible.run_name}: {crucible.run.answers.count()} reports")
