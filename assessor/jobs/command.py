"""The shared shape of the four job commands: select, queue (or run here), report."""

from django.core.management.base import CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.jobs.batch import batch_refusal, batch_run_sync, batch_settle, batch_wait, job_mode_set
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


class JobCommand(CampaignCommand):
    """Subclasses add their selection flags and implement `create_job(options)`."""

    campaign_writes = True

    def add_arguments(self, parser) -> None:
        parser.add_argument("--name", default="", help="the name of what the job produces (required for a new job)")
        parser.add_argument(
            "--resume", type=int, default=None, metavar="JOB", help="resume this job instead of creating one"
        )
        parser.add_argument("--cancel", type=int, default=None, metavar="JOB", help="cancel this job")
        parser.add_argument(
            "--sync", action="store_true", help="run the whole job in this process (no broker, no worker)"
        )
        parser.add_argument("--wait", action="store_true", help="wait for the workers and print the progress")
        parser.add_argument(
            "--threads",
            type=int,
            default=None,
            help="with --sync: items worked at once (default: the endpoint's concurrency)",
        )
        parser.add_argument(
            "--queue", default=None, help="the Celery queue to send the items to (default: the default queue)"
        )
        parser.add_argument(
            "--endpoint",
            default=None,
            metavar="NAME",
            help="the named LLM endpoint whose server, model, limit and prices the job uses (default: default)",
        )
        parser.add_argument(
            "--batch",
            action="store_true",
            help="batch mode: send the calls through the endpoint's batch interface, at its batch price "
            "(an endpoint marked batch = true); with --resume, resume in batch mode",
        )
        parser.add_argument(
            "--batch-reasks",
            choices=[Job.Mode.BATCH, Job.Mode.LIVE],
            default=Job.Mode.BATCH,
            help="in batch mode, ask again an answer that cannot be used in the next round's batch (batch, the "
            "default) or at once (live)",
        )
        parser.add_argument("--live", action="store_true", help="with --resume: resume a batch-mode job live")
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
                self._resume_mode(job, options)
            except JobRequestInvalid as exc:  # its output is another job's now
                raise CommandError(str(exc)) from None
            if pending:
                self.stdout.write(f"job {job.pk}: {pending} items to do")
            else:  # a job left running by a worker that stopped before its end was ended by the reopen
                job.refresh_from_db(fields=["status"])
                self.stdout.write(f"job {job.pk}: nothing left to do: it is {job.status}")
        else:
            if missing := endpoint_missing(options["endpoint"]):
                raise CommandError(missing)
            if options["batch"] and (refusal := batch_refusal(options["endpoint"])):
                raise CommandError(refusal)
            try:
                # Every job command refuses a name outside the rule before it selects or creates anything.
                name_checked(options["name"], option="--name")
                job = self.create_job(options)
                if options["batch"]:
                    job_mode_set(job, mode=Job.Mode.BATCH, reasks=options["batch_reasks"])
            except (NameRefused, JobRequestInvalid, LLMNotConfigured) as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"job {job.pk}: {job.kind_label} -> {job.output_name!r}, {job.total_items} items")
        if options["sync"] and job.mode == Job.Mode.BATCH:
            # The batches' rounds are database work: LLM_BATCH_ROUND_THREADS unless asked otherwise.
            job = batch_run_sync(job.pk, threads=options["threads"], report=self.stdout.write)
        elif options["sync"]:
            threads = options["threads"] or endpoint_config(job.endpoint_name).concurrency
            job_run_sync(job.pk, threads=threads)
            job.refresh_from_db()
            self.stdout.write(job_progress_line(job))
        else:
            job_dispatch(job)
            self.stdout.write(f"queued job {job.pk}" + (" in batch mode" if job.mode == Job.Mode.BATCH else ""))
            if options["wait"] and job.mode == Job.Mode.BATCH:
                job = batch_wait(job.pk, report=self.stdout.write)
            elif options["wait"]:
                job = job_wait(job.pk, report=self.stdout.write)
        if job.status == Job.Status.FAILED and job.error:
            self.stderr.write(job.error)
        self._report_failures(job)

    def _resume_mode(self, job: Job, options: dict) -> None:
        """--batch or --live switch a resumed job's mode; a batch job going live first stores what its batches
        answered, so that those answers count."""
        if options["batch"]:
            job_mode_set(job, mode=Job.Mode.BATCH, reasks=options["batch_reasks"])
        elif options["live"] and job.mode == Job.Mode.BATCH:
            batch_settle(job)
            job_mode_set(job, mode=Job.Mode.LIVE, reasks=job.batch_reasks)

    def _report_failures(self, job: Job) -> None:
        if not job.failed_items:
            return
        for item in job.items.filter(status="failed")[:10]:
            self.stderr.write(f"failed {item.key}: {item.error}")
        if job.failed_items > 10:
            self.stderr.write(f"... {job.failed_items - 10} more; see the job's page")
