"""The shared shape of the four job commands: select, queue (or run here), report."""

from django.core.management.base import BaseCommand, CommandError

from assessor.jobs.engine import (
    JobRequestInvalid,
    job_cancel,
    job_dispatch,
    job_progress_line,
    job_reopen,
    job_run_sync,
    job_wait,
)
from assessor.jobs.llm.client import LLMNotConfigured
from assessor.jobs.llm.endpoints import endpoint_config, endpoint_missing
from assessor.models import Job
from assessor.names import NameRefused, name_checked


class JobCommand(BaseCommand):
    """Subclasses add their selection flags and implement `create_job(options)`."""

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", default="", help="the name of what the job produces (required for a new job)")
        parser.add_argument("--resume", type=int, default=None, metavar="JOB", help="resume this job instead of creating one")
        parser.add_argument("--cancel", type=int, default=None, metavar="JOB", help="cancel this job")
        parser.add_argument("--sync", action="store_true", help="run the whole job in this process (no broker, no worker)")
        parser.add_argument("--wait", action="store_true", help="wait for the workers and print the progress")
        parser.add_argument(
            "--threads",
            type=int,
            default=None,
            help="with --sync: items worked at once (default: the endpoint's concurrency)",
        )
        parser.add_argument("--queue", default=None, help="the Celery queue to send the items to (default: the default queue)")
        parser.add_argument(
            "--endpoint",
            default=None,
            metavar="NAME",
            help="the named LLM endpoint whose server, model, limit and prices the job uses (default: default)",
        )
        self.add_selection_arguments(parser)

    def add_selection_arguments(self, parser) -> None:
        pass

    def create_job(self, options: dict) -> Job:
        raise NotImplementedError

    def handle(self, *args, **options) -> None:
        if options["cancel"] is not None:
            done = job_cancel(options["cancel"])
            self.stdout.write(f"job {options['cancel']} {'cancelled' if done else 'was not queued or running'}")
            return
        if options["resume"] is not None:
            job = Job.objects.filter(pk=options["resume"]).first()
            if job is None:
                raise CommandError(f"no job {options['resume']}")
            # A job keeps the endpoint it was made with.
            if missing := endpoint_missing(job.endpoint_name):
                raise CommandError(missing)
            try:
                pending = job_reopen(job.pk)
            except JobRequestInvalid as exc:  # its output is another job's now
                raise CommandError(str(exc)) from None
            self.stdout.write(f"job {job.pk}: {pending} items to do")
        else:
            if missing := endpoint_missing(options["endpoint"]):
                raise CommandError(missing)
            try:
                # Every job command refuses a name outside the rule before it selects or creates anything.
                name_checked(options["name"], option="--name")
                job = self.create_job(options)
            except (NameRefused, JobRequestInvalid, LLMNotConfigured) as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"job {job.pk}: {job.kind_label} -> {job.output_name!r}, {job.total_items} items")
        if options["sync"]:
            threads = options["threads"] or endpoint_config(job.endpoint_name).concurrency
            job_run_sync(job.pk, threads=threads)
            job.refresh_from_db()
            self.stdout.write(job_progress_line(job))
        else:
            job_dispatch(job)
            self.stdout.write(f"queued job {job.pk}")
            if options["wait"]:
                job = job_wait(job.pk, report=self.stdout.write)
        self._report_failures(job)

    def _report_failures(self, job: Job) -> None:
        if not job.failed_items:
            return
        for item in job.items.filter(status="failed")[:10]:
            self.stderr.write(f"failed {item.key}: {item.error}")
        if job.failed_items > 10:
            self.stderr.write(f"... {job.failed_items - 10} more; see the job's page")
