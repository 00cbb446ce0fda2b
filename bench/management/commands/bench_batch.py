"""Benchmark of batch mode: one AutoAssign job live and the same job in batch mode, against one local server.

Builds answers and nugget lists under fresh names in the configured database (use a scratch one, as for
bench_llm) and starts the test server (bench.fake_llm) in its own process, answering a live call after
`--latency` seconds and a batch `--batch-delay` seconds after it is created. Then:
- live: the job's items worked in this process, `--concurrency` calls in flight (job_run_sync);
- batch: the same job (another model name, so that neither reads the other's answers from the cache) in batch
  mode, its steps run in this process (batch_run_sync), polling every `--poll` seconds; a job of 20 nuggets an
  answer asks twice an answer, one after the other: two rounds of batches.
It prints, for each: the wall time, the calls (by the server, per model; by the job; from the call log), the
cost; for the batch job its rounds, batches and the batch delay; then the cost ratio and whether the labels are
the same, answer by answer.
"""

import subprocess
import sys
import time
import uuid
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from assessor.jobs.batch import batch_run_sync, job_mode_set
from assessor.jobs.engine import job_run_sync
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Job, LLMBatch, LLMCall
from assignment.auto import auto_assign_job_create
from bench.management.commands.bench_llm import Command as LLMBench
from bench.management.commands.bench_llm import app_labels
from bench.processes import fake_server_stop, load_average, server_stats

REPO = Path(settings.BASE_DIR)


class Command(BaseCommand):
    help = "Batch mode against live: one AutoAssign job both ways on the test server; labels, costs, wall times."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--calls", type=int, default=4000, help="calls of the job")
        parser.add_argument("--nuggets", type=int, default=20, help="nuggets per topic (calls per answer = ceil(n/10))")
        parser.add_argument("--runs", type=int, default=20, help="answers per topic")
        parser.add_argument("--latency", type=float, default=0.05, help="seconds the server takes per live answer")
        parser.add_argument("--concurrency", type=int, default=16, help="live calls in flight")
        parser.add_argument("--batch-delay", type=float, default=5.0, help="seconds a batch takes to end")
        parser.add_argument("--poll", type=float, default=0.5, help="seconds between two looks at the batches")
        parser.add_argument("--threads", type=int, default=8, help="threads working a batch round's items")
        parser.add_argument("--price-input", type=float, default=2.5, help="US dollars per million input tokens")
        parser.add_argument("--price-output", type=float, default=10.0, help="US dollars per million output tokens")

    def handle(self, *args, **options) -> None:
        per_answer = -(-options["nuggets"] // 10)
        answers = options["calls"] // per_answer
        tag = uuid.uuid4().hex[:8]
        builder = LLMBench()
        builder.stdout = self.stdout
        nuggets_name, _ids = builder._build(f"batch-{tag}", answers, options)
        server, url = self._start_server(options)
        try:
            self._point_at(url, options)
            live, live_seconds = self._live(tag, nuggets_name, options)
            batch, batch_seconds = self._batch(tag, nuggets_name, options)
            stats = server_stats(url)
        finally:
            fake_server_stop(server)
        self._report(live, live_seconds, batch, batch_seconds, stats, options)

    def _start_server(self, options: dict) -> tuple[subprocess.Popen, str]:
        command = [sys.executable, "-m", "bench.fake_llm", "--latency", str(options["latency"])]
        command += ["--batch-delay", str(options["batch_delay"])]
        server = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, text=True)
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http"):
            raise CommandError("the test server did not start")
        return server, url

    def _point_at(self, url: str, options: dict) -> None:
        """The default endpoint, in this process: the test server, offering batches at half price."""
        settings.LLM_BASE_URL, settings.LLM_API_KEY, settings.LLM_MODEL = url, "", "bench"
        settings.LLM_CONCURRENCY = options["concurrency"]
        settings.LLM_PRICE_INPUT, settings.LLM_PRICE_OUTPUT = options["price_input"], options["price_output"]
        settings.LLM_BATCH, settings.LLM_BATCH_PRICE_FACTOR = True, 0.5

    def _job(self, name: str, model: str, nuggets_name: str) -> Job:
        config = replace(LLMConfig.from_settings(), model=model)
        return auto_assign_job_create(nuggets=nuggets_name, name=name, config=config)

    def _live(self, tag: str, nuggets_name: str, options: dict) -> tuple[Job, float]:
        job = self._job(f"bench-live-{tag}", f"live-{tag}", nuggets_name)
        config = replace(LLMConfig.from_settings(), model=job.model)
        started = time.monotonic()
        job_run_sync(job.pk, threads=options["concurrency"], config=config)
        seconds = time.monotonic() - started
        job.refresh_from_db()
        self.stdout.write(f"live: {job.status} in {seconds:.1f} s (load {load_average()})")
        return job, seconds

    def _batch(self, tag: str, nuggets_name: str, options: dict) -> tuple[Job, float]:
        job = self._job(f"bench-batch-{tag}", f"batch-{tag}", nuggets_name)
        job_mode_set(job, mode=Job.Mode.BATCH)
        started = time.monotonic()
        job = batch_run_sync(job.pk, threads=options["threads"], report=self.stdout.write, poll=options["poll"])
        seconds = time.monotonic() - started
        self.stdout.write(f"batch: {job.status} in {seconds:.1f} s (load {load_average()})")
        return job, seconds

    def _report(self, live: Job, live_seconds: float, batch: Job, batch_seconds: float, stats: dict, options) -> None:
        by_model = stats["requests_by_model"]
        logged = {
            job.pk: LLMCall.objects.filter(job=job, from_cache=False, reached=True).count() for job in (live, batch)
        }
        batches = list(LLMBatch.objects.filter(job=batch).order_by("id"))
        rounds = max((row.round for row in batches), default=0)
        live_labels, batch_labels = app_labels(live), app_labels(batch)
        same = sum(1 for answer, labels in live_labels.items() if batch_labels.get(answer) == labels)
        count_live = sum(len(labels) for labels in live_labels.values())
        count_batch = sum(len(labels) for labels in batch_labels.values())
        ratio = Decimal(batch.cost_picodollars) / Decimal(live.cost_picodollars) if live.cost_picodollars else None
        write = self.stdout.write
        write("")
        write(f"{'':24}{'live':>14}{'batch':>14}")
        write(f"{'status':24}{live.status:>14}{batch.status:>14}")
        write(f"{'wall time (s)':24}{live_seconds:>14.1f}{batch_seconds:>14.1f}")
        write(f"{'calls (server)':24}{by_model.get(live.model, 0):>14}{by_model.get(batch.model, 0):>14}")
        write(f"{'calls (job)':24}{live.calls:>14}{batch.calls:>14}")
        write(f"{'calls (call log)':24}{logged[live.pk]:>14}{logged[batch.pk]:>14}")
        write(
            f"{'tokens in / out':24}{f'{live.tokens_in}/{live.tokens_out}':>14}{f'{batch.tokens_in}/{batch.tokens_out}':>14}"
        )
        write(f"{'cost ($)':24}{live.cost!s:>14}{batch.cost!s:>14}")
        write(f"{'labels':24}{count_live:>14}{count_batch:>14}")
        write("")
        write(
            f"batch job: {rounds} rounds, {len(batches)} batches of "
            f"{', '.join(str(row.request_total) for row in batches)} requests; batch delay {options['batch_delay']} s, "
            f"polled every {options['poll']} s; live latency {options['latency']} s at {options['concurrency']} at once"
        )
        write(f"cost ratio batch/live: {ratio:.6f}" if ratio is not None else "cost ratio: no live cost")
        write(
            f"answers labelled the same: {same} of {len(live_labels)}; label counts equal: {count_live == count_batch}"
        )
        write(f"load average: {load_average()}")
