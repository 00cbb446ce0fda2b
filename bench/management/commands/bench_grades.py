"""Benchmark of PrefNugget's grading phase: every report of a request set on every question of its bank, through
real Celery workers, against the local fake LLM server (bench.fake_llm) answering after a fixed latency.

Builds a request set of `--topics` requests with `--runs` reports each and a bank of `--questions` questions per
request (the Rag4Reports size by default: 68 x 57 x 20, 77,520 calls) under fresh names in the configured
database (use a scratch one, as for bench_llm), then runs one grading job: the calls the job counts and the
server counts, its wall time against the ideal (calls x latency / concurrency) and the workers' CPU per call.
Last, the same grades again under another name: the answer cache should make that 0 calls.
"""

import time
import uuid

from django.core.management.base import BaseCommand
from django.db import transaction

from assessor.jobs.engine import job_dispatch, job_run_sync
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Answer, ImportBatch, Job, LabelSource, LLMCall, Run, Topic
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
from grades.llm import grades_job_create
from nuggets.banks import Question, bank_store
from nuggets.kinds import IMPORT_NUGGETS

WORDS = "bees honey nectar hive flowers pollen wax queen workers stings summer winter colony dance".split()


class Command(BaseCommand):
    help = "Benchmark PrefNugget's grading job through real Celery workers against the local fake LLM server."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--topics", type=int, default=68, help="requests (default 68, as Rag4Reports)")
        parser.add_argument("--runs", type=int, default=57, help="reports per request (default 57)")
        parser.add_argument("--questions", type=int, default=20, help="questions in each request's bank (default 20)")
        worker_arguments(parser)

    def handle(self, *args, **options) -> None:
        redis_url = workers_broker("bench_grades", options["redis"])
        tag = uuid.uuid4().hex[:8]
        self.stdout.write(f"load average at the start: {load_average()}")
        self.stdout.write(bench_leftovers())
        topics, bank = self._build(tag, options["topics"], options["runs"], options["questions"])
        self.stdout.write(database_tidied())
        server, url = fake_server_start(options["latency"])
        try:
            config = LLMConfig(model=f"bench-{tag}-grades", base_url=url, concurrency=options["concurrency"])
            self._measure(tag, topics, bank, config, url, redis_url, options)
            again = grades_job_create(name=f"bench-{tag}-again", bank=bank, topics=topics, config=config)
            job_run_sync(again.pk, threads=options["concurrency"], config=config)
            again.refresh_from_db()
            hits = LLMCall.objects.filter(job=again, from_cache=True).count()
            self.stdout.write(
                f"the same grades again: {again.done_items}/{again.total_items} items, {again.calls} calls made, "
                f"{hits} answered from the cache"
            )
        finally:
            stats = fake_server_stop(server)
        self.stdout.write(f"test server: {stats} (the limit was {options['concurrency']})")
        self.stdout.write(f"load average at the end: {load_average()}")

    def _build(self, tag: str, topics: int, runs: int, questions: int) -> tuple[list[str], str]:
        """Topics with reports of a few sentences each, and a bank of questions on each (from a file); every report's
        text and every question differ, so that each grade is one call."""
        name = f"bench-{tag}"
        with transaction.atomic():
            batch = ImportBatch.objects.create(kind=IMPORT_NUGGETS, file_name=f"{name}.jsonl", sha256="0" * 64)
            source = LabelSource.objects.create(
                family="nuggets", name=name, kind=LabelSource.Kind.FILE, imported_from=batch
            )
            made = Run.objects.bulk_create(Run(run_id=f"{name}-r{r:02d}") for r in range(runs))
            ids = []
            for t in range(topics):
                topic = Topic.objects.create(id=f"{name}-t{t:03d}", query=f"{WORDS[t % len(WORDS)]} request {t}")
                rows = []
                for r, run in enumerate(made):
                    sentences = [
                        f"Report {r} of request {t} on {WORDS[(t + r + k) % len(WORDS)]} says something."
                        for k in range(5)
                    ]
                    text = " ".join(sentences)
                    rows.append(Answer(run=run, topic=topic, text=text, words=len(text.split())))
                Answer.objects.bulk_create(rows)
                asked = [
                    Question(
                        text=f"What of {WORDS[(t + q) % len(WORDS)]} and {WORDS[(t + 2 * q) % len(WORDS)]} ({t}.{q})?"
                    )
                    for q in range(questions)
                ]
                bank_store(topic_id=topic.id, name=name, questions=asked, source=source, imported_from=batch)
                ids.append(topic.id)
        self.stdout.write(f"built {topics} requests x {runs} reports, a bank of {questions} questions each ({name})")
        return ids, name

    def _measure(
        self, tag: str, topics: list[str], bank: str, config: LLMConfig, url: str, redis_url: str, options: dict
    ) -> None:
        queue = f"bench-{tag}"
        job = grades_job_create(name=queue, bank=bank, topics=topics, queue=queue, config=config)
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
            f"{job.total_items} grades ({len(topics)} requests): {job.done_items} done, {job.failed_items} failed; "
            f"{job.calls} calls counted by the job, {served} by the server\n"
            f"wall {wall:.1f} s against the ideal {ideal:.1f} s ({ideal / wall if wall else 0:.2f} of it); "
            f"workers' CPU {cpu:.1f} s, {1000 * cpu / max(job.calls, 1):.1f} ms a call"
        )
