"""Benchmark of Crucible: every (question, chunk) pair of a request set, through real Celery workers, against
the local fake LLM server (bench.fake_llm) answering after a fixed latency, with log-probabilities.

Builds `--topics` requests, each with `--chunks` documents of about 900 characters that only its own query
retrieves (so one chunk each) and a bank of `--questions` questions, under fresh names in the configured
database (use a scratch one, as for bench_llm), then runs one Crucible job: the calls the job counts and the
server counts, its wall time against the ideal (calls x latency / concurrency), the workers' CPU per call, and
the run it made. Last, the same bank again under another run id: the answer cache should make that 0 calls.
"""

import time
import uuid

from django.core.management.base import BaseCommand
from django.db import transaction

from assessor.jobs.engine import job_dispatch, job_run_sync
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Answer, ImportBatch, Job, LabelSource, LLMCall, Segment, Topic
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
from crucible.llm import crucible_job_create
from nuggets.banks import Question, bank_store
from reports.kinds import IMPORT_REQUESTS
from reports.models import ReportRequest

WORDS = "bees honey nectar hive flowers pollen wax queen workers stings summer winter colony dance".split()


class Command(BaseCommand):
    help = "Benchmark Crucible's job through real Celery workers against the local fake LLM server."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--topics", type=int, default=68, help="requests (default 68, as Rag4Reports)")
        parser.add_argument("--questions", type=int, default=20, help="questions of each request's bank (default 20)")
        parser.add_argument("--chunks", type=int, default=40, help="chunks read per request (default 40)")
        worker_arguments(parser)

    def handle(self, *args, **options) -> None:
        redis_url = workers_broker("bench_crucible", options["redis"])
        tag = uuid.uuid4().hex[:8]
        self.stdout.write(f"load average at the start: {load_average()}")
        self.stdout.write(bench_leftovers())
        topics, bank = self._build(tag, options["topics"], options["questions"], options["chunks"])
        self.stdout.write(database_tidied())
        server, url = fake_server_start(options["latency"])
        try:
            config = LLMConfig(model=f"bench-{tag}-crucible", base_url=url, concurrency=options["concurrency"])
            self._measure(tag, topics, bank, config, url, redis_url, options)
            started = time.monotonic()
            again = crucible_job_create(
                name=f"bench-{tag}-again", bank=bank, topics=topics, chunks=options["chunks"],
                documents=options["chunks"], config=config,
            )  # fmt: skip
            job_run_sync(again.pk, threads=options["concurrency"], config=config)
            again.refresh_from_db()
            hits = LLMCall.objects.filter(job=again, from_cache=True).count()
            self.stdout.write(
                f"the same bank again: {again.done_items}/{again.total_items} questions, {again.calls} calls made, "
                f"{hits} answered from the cache, {time.monotonic() - started:.1f} s in this process"
            )
        finally:
            stats = fake_server_stop(server)
        self.stdout.write(f"test server: {stats} (the limit was {options['concurrency']})")
        self.stdout.write(f"load average at the end: {load_average()}")

    def _build(self, tag: str, topics: int, questions: int, chunks: int) -> tuple[list[str], str]:
        """Requests, each with `chunks` documents of its own (one chunk each) and a bank of `questions`."""
        name = f"bench-{tag}"
        with transaction.atomic():
            batch = ImportBatch.objects.create(kind=IMPORT_REQUESTS, file_name=f"{name}.jsonl", sha256="0" * 64)
            source = LabelSource.objects.create(family="nuggets", name=name, kind=LabelSource.Kind.FILE)
            ids = []
            for t in range(topics):
                own = f"topic{tag}x{t:03d}"
                title = f"{own} {WORDS[t % len(WORDS)]} {WORDS[(t + 3) % len(WORDS)]}"
                topic = Topic.objects.create(id=f"{name}-t{t:03d}", query=title)
                ReportRequest.objects.create(
                    topic=topic,
                    title=title,
                    background=f"Someone curious about {WORDS[(t + 5) % len(WORDS)]}.",
                    problem_statement=f"Explain {' and '.join(WORDS[(t + k) % len(WORDS)] for k in range(4))}.",
                    imported_from=batch,
                )
                Segment.objects.bulk_create(
                    Segment(
                        docid=f"{name}-t{t:03d}-d{d:02d}",
                        text=" ".join(
                            f"The {own} {WORDS[(t + d + s) % len(WORDS)]} fact number {s} of document {d} "
                            f"tells about {WORDS[(d + 2 * s) % len(WORDS)]} and {WORDS[(s + 7) % len(WORDS)]}."
                            for s in range(9)
                        ),
                        imported_from=batch,
                    )
                    for d in range(chunks)
                )
                bank_store(
                    topic_id=topic.id,
                    name=name,
                    questions=[
                        Question(
                            text=f"What about {WORDS[(t + q) % len(WORDS)]} and {WORDS[(q * 5) % len(WORDS)]} {q}?"
                        )
                        for q in range(questions)
                    ],
                    source=source,
                    imported_from=batch,
                )
                ids.append(topic.id)
        self.stdout.write(f"built {topics} requests x {chunks} documents, {questions} questions each ({name})")
        return ids, name

    def _measure(
        self, tag: str, topics: list[str], bank: str, config: LLMConfig, url: str, redis_url: str, options: dict
    ) -> None:
        queue = f"bench-{tag}"
        created = time.monotonic()
        job = crucible_job_create(
            name=queue, bank=bank, topics=topics, chunks=options["chunks"], documents=options["chunks"],
            queue=queue, config=config,
        )  # fmt: skip
        self.stdout.write(f"job made in {time.monotonic() - created:.1f} s (retrieval and chunks)")
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
        reports = Answer.objects.filter(run__run_id=queue).count()
        self.stdout.write(
            f"{job.total_items} questions ({len(topics)} requests): {job.done_items} done, {job.failed_items} failed; "
            f"{job.calls} calls counted by the job, {served} by the server\n"
            f"wall {wall:.1f} s against the ideal {ideal:.1f} s ({ideal / wall if wall else 0:.2f} of it); "
            f"workers' CPU {cpu:.1f} s, {1000 * cpu / max(job.calls, 1):.1f} ms a call; run {queue}: {reports} reports"
        )
