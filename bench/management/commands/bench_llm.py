"""Benchmark of the job engine: AutoAssign against a local server answering after a fixed latency.

Builds answers and nugget sets under fresh names in the configured database
(use a scratch one: see docs/llm.md), starts the test server in its own
process, then for each worker count starts that many real Celery workers on
Redis, runs one AutoAssign job through them, and prints the wall time, the
ideal time (calls x latency / concurrency) and their ratio. Last, the first
job is run again (same model, prompts, messages) and the calls it made are
printed: the cache should make that 0.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from assessor.jobs.engine import job_dispatch, job_run_sync
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Answer, ImportBatch, Job, LabelSource, Run, Topic
from assessor.project.celery import app as celery_app
from assessor.sources import source_claim
from assignment.auto import auto_assign_job_create
from bench.serving import database_url
from nuggets import kinds as nugget_kinds
from nuggets.models import Nugget, NuggetSet

REPO = Path(settings.BASE_DIR)


class Command(BaseCommand):
    help = "Benchmark AutoAssign through real Celery workers against a local server with a fixed latency."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--answers", type=int, default=500)
        parser.add_argument("--nuggets", type=int, default=20, help="nuggets per topic (calls per answer = ceil(n/10))")
        parser.add_argument("--runs", type=int, default=20, help="answers per topic")
        parser.add_argument("--latency", type=float, default=0.3, help="seconds the server takes per answer")
        parser.add_argument("--concurrency", type=int, default=16, help="the LLM concurrency limit")
        parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker process counts to measure")
        parser.add_argument(
            "--threads",
            type=int,
            default=None,
            help="threads per worker (default twice the limit: a thread also spends time between its calls)",
        )
        parser.add_argument(
            "--redis", default=os.environ.get("REDIS_URL", ""), help="the Redis broker URL (default $REDIS_URL)"
        )

    def handle(self, *args, **options) -> None:
        redis_url = options["redis"] or (
            settings.CELERY_BROKER_URL if settings.CELERY_BROKER_URL.startswith("redis") else ""
        )
        if not redis_url:
            raise CommandError(
                "bench_llm runs real workers on Redis: set REDIS_URL or pass --redis redis://HOST:6379/0"
            )
        if connection.vendor == "sqlite" and ":memory:" in str(connection.settings_dict["NAME"]):
            raise CommandError("bench_llm needs a database the workers can share (a file or PostgreSQL)")
        celery_app.conf.broker_url = redis_url
        tag = uuid.uuid4().hex[:8]
        nuggets_name = self._build(tag, options)
        server, url = self._start_server(options["latency"])
        try:
            first_model = None
            for workers in options["workers"]:
                model = f"bench-{tag}-w{workers}"
                first_model = first_model or model
                self._measure(tag, nuggets_name, url, model, workers, redis_url, options)
            self._second_run(tag, nuggets_name, url, first_model, options)
        finally:
            server.terminate()
            assert server.stdout is not None
            stats = server.stdout.read().strip()
            server.wait(timeout=10)
        self.stdout.write(f"test server: {stats} (the limit was {options['concurrency']})")

    # --- data -----------------------------------------------------------------------

    def _build(self, tag: str, options: dict) -> str:
        per_topic = options["runs"]
        topics = -(-options["answers"] // per_topic)
        name = f"bench-{tag}"
        with transaction.atomic():
            batch = ImportBatch.objects.create(
                kind=nugget_kinds.IMPORT_NUGGETS, file_name=f"{name}.jsonl", sha256="0" * 64
            )
            runs = Run.objects.bulk_create(Run(run_id=f"{name}-r{r:02d}") for r in range(per_topic))
            made = 0
            for t in range(topics):
                topic = Topic.objects.create(id=f"{name}-t{t:03d}", query=f"benchmark query {t} about zebra stripes")
                source = source_claim(
                    family=nugget_kinds.LABEL_FAMILY, name=name, kind=LabelSource.Kind.FILE, batch=batch
                )
                nugget_set = NuggetSet.objects.create(
                    topic=topic, kind="manual", name=name, source=source, imported_from=batch
                )
                Nugget.objects.bulk_create(
                    Nugget(
                        nugget_set=nugget_set,
                        position=i,
                        text=f"zebra fact {t}-{i}",
                        importance="vital",
                        imported_from=batch,
                    )
                    for i in range(options["nuggets"])
                )
                answers = []
                for run in runs:
                    if made == options["answers"]:
                        break
                    text = f"Answer {made} of {run.run_id}: zebra fact {t}-{made % options['nuggets']} holds."
                    answers.append(Answer(run=run, topic=topic, text=text, words=len(text.split())))
                    made += 1
                Answer.objects.bulk_create(answers)
        self.stdout.write(f"built {made} answers over {topics} topics, {options['nuggets']} nuggets each ({name})")
        return name

    # --- processes ------------------------------------------------------------------

    def _env(self, url: str, redis_url: str, options: dict) -> dict:
        return {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": redis_url,
            "LLM_BASE_URL": url,
            "LLM_MODEL": "bench",
            "LLM_API_KEY": "",
            "LLM_API_VERSION": "",
            "LLM_CONCURRENCY": str(options["concurrency"]),
            "PYTHONPATH": str(REPO),
        }

    def _start_server(self, latency: float) -> tuple[subprocess.Popen, str]:
        server = subprocess.Popen(
            [sys.executable, "-m", "bench.fake_llm", "--latency", str(latency)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http"):
            raise CommandError("the test server did not start")
        return server, url

    def _start_workers(
        self, count: int, queue: str, env: dict, concurrency: int
    ) -> list[tuple[subprocess.Popen, Path]]:
        workers = []
        for index in range(count):
            log = Path(tempfile.gettempdir()) / f"{queue}-{index}.log"
            command = [
                str(Path(sys.executable).with_name("celery")), "-A", "assessor", "worker", "-P", "threads",
                "-c", str(concurrency), "-Q", queue, "-n", f"{queue}-{index}@%h", "--without-gossip",
                "--without-mingle", "--without-heartbeat", "-l", "INFO", "--logfile", str(log),
            ]  # fmt: skip
            workers.append(
                (
                    subprocess.Popen(
                        command,
                        cwd=REPO,
                        env=env,
                        start_new_session=True,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL,
                    ),
                    log,
                )
            )
        deadline = time.monotonic() + 120
        for _worker, log in workers:
            while not (log.exists() and " ready." in log.read_text(errors="replace")):
                if time.monotonic() > deadline:
                    raise CommandError(f"a worker did not start; see {log}")
                time.sleep(0.2)
        return workers

    def _stop_workers(self, workers: list[tuple[subprocess.Popen, Path]]) -> None:
        for worker, _log in workers:
            os.killpg(worker.pid, signal.SIGTERM)
        for worker, log in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
            log.unlink(missing_ok=True)

    # --- measures -------------------------------------------------------------------

    def _config(self, url: str, model: str, options: dict) -> LLMConfig:
        return LLMConfig(model=model, base_url=url, concurrency=options["concurrency"])

    def _measure(self, tag, nuggets_name, url, model, workers, redis_url, options) -> None:
        queue = f"bench-{tag}-w{workers}"
        job = auto_assign_job_create(
            nuggets=nuggets_name, name=queue, queue=queue, config=self._config(url, model, options)
        )
        threads = options["threads"] or 2 * options["concurrency"]
        running = self._start_workers(workers, queue, self._env(url, redis_url, options), threads)
        try:
            started = time.monotonic()
            job_dispatch(job)
            while Job.objects.filter(pk=job.pk, status__in=["queued", "running"]).exists():
                time.sleep(0.05)
            wall = time.monotonic() - started
        finally:
            self._stop_workers(running)
        job.refresh_from_db()
        ideal = job.calls * options["latency"] / options["concurrency"]
        self.stdout.write(
            f"{workers} worker process{'es' if workers > 1 else ''} x {threads} threads, limit {options['concurrency']}: "
            f"{job.done_items}/{job.total_items} answers, {job.failed_items} failed, {job.calls} calls, "
            f"wall {wall:.2f} s, ideal {ideal:.2f} s, ideal/wall {ideal / wall:.0%}"
        )

    def _second_run(self, tag, nuggets_name, url, model, options) -> None:
        job = auto_assign_job_create(
            nuggets=nuggets_name, name=f"bench-{tag}-again", config=self._config(url, model, options)
        )
        started = time.monotonic()
        job_run_sync(job.pk, threads=options["concurrency"], config=replace(self._config(url, model, options)))
        wall = time.monotonic() - started
        job.refresh_from_db()
        self.stdout.write(
            f"second run of the same job: {job.done_items}/{job.total_items} answers, {job.calls} calls made, "
            f"wall {wall:.2f} s"
        )
