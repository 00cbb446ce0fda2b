"""Benchmark of PrefNugget's preference phase: every sampled pair of a request set, through real Celery workers,
against the local fake LLM server (bench.fake_llm) answering after a fixed latency.

Builds a request set of `--topics` requests with `--runs` reports each (the Rag4Reports size by default: 68 x 57,
218 pairs a request) under fresh names in the configured database (use a scratch one, as for bench_llm), then
runs one preference job: the calls the job counts and the server counts, its wall time against the ideal (calls x
latency / concurrency) and the workers' CPU per call. Last, the same pairs again under another name: the answer
cache should make that 0 calls.
"""

import time
import uuid

from django.core.management.base import BaseCommand
from django.db import transaction

from assessor.jobs.engine import job_dispatch, job_run_sync
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Answer, ImportBatch, Job, LLMCall, Run, Topic
from bench.processes import (
    fake_server_start,
    fake_server_stop,
    load_average,
    process_cpu_seconds,
    server_stats,
    worker_arguments,
    worker_env,
    workers_broker,
    workers_start,
    workers_stop,
)
from bench.tidy import bench_leftovers, database_tidied
from preferences.llm import preferences_job_create
from reports.kinds import IMPORT_REQUESTS
from reports.models import ReportRequest

WORDS = "bees honey nectar hive flowers pollen wax queen workers stings summer winter colony dance".split()


class Command(BaseCommand):
    help = "Benchmark PrefNugget's preference job through real Celery workers against the local fake LLM server."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--topics", type=int, default=68, help="requests (default 68, as Rag4Reports)")
        parser.add_argument("--runs", type=int, default=57, help="reports per request (default 57)")
        worker_arguments(parser)

    def handle(self, *args, **options) -> None:
        redis_url = workers_broker("bench_preferences", options["redis"])
        tag = uuid.uuid4().hex[:8]
        self.stdout.write(f"load average at the start: {load_average()}")
        self.stdout.write(bench_leftovers())
        topics = self._build(tag, options["topics"], options["runs"])
        self.stdout.write(database_tidied())
        server, url = fake_server_start(options["latency"])
        try:
            model = f"bench-{tag}-preferences"
            config = LLMConfig(model=model, base_url=url, concurrency=options["concurrency"])
            self._measure(tag, topics, config, url, redis_url, options)
            again = preferences_job_create(name=f"bench-{tag}-again", topics=topics, config=config)
            job_run_sync(again.pk, threads=options["concurrency"], config=config)
            again.refresh_from_db()
            hits = LLMCall.objects.filter(job=again, from_cache=True).count()
            self.stdout.write(
                f"the same pairs again: {again.done_items}/{again.total_items} pairs, {again.calls} calls made, "
                f"{hits} answered from the cache"
            )
        finally:
            stats = fake_server_stop(server)
        self.stdout.write(f"test server: {stats} (the limit was {options['concurrency']})")
        self.stdout.write(f"load average at the end: {load_average()}")

    def _build(self, tag: str, topics: int, runs: int) -> list[str]:
        """Requests with a background and a problem statement, and reports of a few sentences each."""
        name = f"bench-{tag}"
        with transaction.atomic():
            batch = ImportBatch.objects.create(kind=IMPORT_REQUESTS, file_name=f"{name}.jsonl", sha256="0" * 64)
            made = Run.objects.bulk_create(Run(run_id=f"{name}-r{r:02d}") for r in range(runs))
            ids = []
            for t in range(topics):
                title = f"{WORDS[t % len(WORDS)]} {WORDS[(t + 3) % len(WORDS)]} request {t}"
                topic = Topic.objects.create(id=f"{name}-t{t:03d}", query=title)
                ReportRequest.objects.create(
                    topic=topic,
                    title=title,
                    background=f"Someone curious about {WORDS[(t + 5) % len(WORDS)]}.",
                    problem_statement=f"Explain {' and '.join(WORDS[(t + k) % len(WORDS)] for k in range(4))}.",
                    imported_from=batch,
                )
                rows = []
                for r, run in enumerate(made):
                    sentences = [f"Report {r} on {WORDS[(t + r + k) % len(WORDS)]} says something." for k in range(5)]
                    text = " ".join(sentences)
                    rows.append(Answer(run=run, topic=topic, text=text, words=len(text.split())))
                Answer.objects.bulk_create(rows)
                ids.append(topic.id)
        self.stdout.write(f"built {topics} requests x {runs} reports ({name})")
        return ids

    def _measure(self, tag: str, topics: list[str], config: LLMConfig, url: str, redis_url: str, options: dict) -> None:
        queue = f"bench-{tag}"
        job = preferences_job_create(name=queue, topics=topics, queue=queue, config=config)
        env = worker_env(url=url, redis_url=redis_url, concurrency=options["concurrency"])
        threads = options["threads"] or 2 * options["concurrency"]
        running = workers_start(options["workers"], queue, env, threads)
        try:
            cpu_before = sum(process_cpu_seconds(worker.pid) for worker, _log in running)
            started = time.monotonic()
            job_dispatch(job)
            while Job.objects.filter(pk=job.pk, status__in=["queued", "running"]).exists():
                time.sleep(0.1)
            wall = time.monotonic() - started
            cpu = sum(process_cpu_seconds(worker.pid) for worker, _log in running) - cpu_before
        finally:
            workers_stop(running)
        job.refresh_from_db()
        served = server_stats(url).get("requests_by_model", {}).get(config.model, 0)
        ideal = job.calls * options["latency"] / options["concurrency"]
        self.stdout.write(
            f"{job.total_items} pairs ({len(topics)} requests): {job.done_items} done, {job.failed_items} failed; "
            f"{job.calls} calls counted by the job, {served} by the server\n"
            f"wall {wall:.1f} s against the ideal {ideal:.1f} s ({ideal / wall if wall else 0:.2f} of it); "
            f"workers' CPU {cpu:.1f} s, {1000 * cpu / max(job.calls, 1):.1f} ms a call"
        )
