"""Benchmark of the PrefNugget pipeline: preferences, then the bank phase, then grading, through real Celery workers against the local fake LLM server (bench.fake_llm) answering after a fixed latency.

Builds a request set of `--topics` requests with `--runs` reports each (the Rag4Reports size by default: 68 x 57)
under fresh names in the configured database (use a scratch one, as for bench_llm), then runs each phase as one
job: the calls the job and the server count, its wall time against the ideal. The ideal of the preference phase
is calls x latency / concurrency; the bank phase is a chain of calls per topic (each batch sees the questions of
the earlier ones), so its ideal is also bounded by the longest topic's chain (its calls x latency): both are
printed, and the larger is the bound. Grading asks one call per (report, question of its topic's new bank). Last,
every phase again under other names on the same workers: the answer cache should make that 0 calls.
"""

import time
import uuid
from collections import Counter

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from assessor.jobs.engine import job_dispatch
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Answer, ImportBatch, Job, LLMCall, Run, Topic
from bench.processes import (
    Workers,
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
from preferences.llm import preferences_job_create
from prefnugget.jobs import prefnugget_job_create
from reports.kinds import IMPORT_REQUESTS
from reports.models import ReportRequest

WORDS = "bees honey nectar hive flowers pollen wax queen workers stings summer winter colony dance".split()


class Command(BaseCommand):
    help = "Benchmark PrefNugget's preference, bank and grading jobs through real Celery workers against the fake LLM server."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--topics", type=int, default=68, help="requests (default 68, as Rag4Reports)")
        parser.add_argument("--runs", type=int, default=57, help="reports per request (default 57)")
        worker_arguments(parser)

    def handle(self, *args, **options) -> None:
        redis_url = workers_broker("bench_prefnugget", options["redis"])
        tag = uuid.uuid4().hex[:8]
        self.stdout.write(f"load average at the start: {load_average()}")
        self.stdout.write(bench_leftovers())
        topics = self._build(tag, options["topics"], options["runs"])
        self.stdout.write(database_tidied())
        server, url = fake_server_start(options["latency"])
        queue = f"bench-{tag}"
        try:
            config = LLMConfig(model=f"bench-{tag}-prefnugget", base_url=url, concurrency=options["concurrency"])
            env = worker_env(url=url, redis_url=redis_url, concurrency=options["concurrency"])
            running = workers_start(options["workers"], queue, env, options["threads"] or 2 * options["concurrency"])
            try:
                phases = []
                preferences = preferences_job_create(name=f"{queue}-prefs", topics=topics, queue=queue, config=config)
                phases.append(self._measure("preferences", preferences, running, url, config, options))
                bank = prefnugget_job_create(
                    name=f"{queue}-bank", preferences=preferences.output_name, topics=topics, queue=queue, config=config
                )
                phases.append(self._measure("bank", bank, running, url, config, options))
                grading = grades_job_create(
                    name=f"{queue}-grades", bank=bank.output_name, topics=topics, queue=queue, config=config
                )
                phases.append(self._measure("grading", grading, running, url, config, options))
                bound, wall = (sum(figures) for figures in zip(*phases, strict=True))
                self.stdout.write(
                    f"pipeline: wall {wall:.1f} s against the sum of the phases' bounds {bound:.1f} s "
                    f"({bound / wall if wall else 0:.2f} of it)"
                )
                self._again(queue, topics, config, running)
            finally:
                workers_stop(running)
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
                    # Reports cover more of the request's words the lower their number: preferences decide.
                    covered = max(1, 5 - r % 6)
                    # The request's number in every sentence: no two requests share a text, so no prompt repeats and
                    # the cache answers nothing on the first run (the words alone repeat every len(WORDS) requests).
                    sentences = [
                        f"Report {r} on {WORDS[(t + k) % len(WORDS)]} for request {t} says something."
                        for k in range(covered)
                    ]
                    text = " ".join(sentences)
                    rows.append(Answer(run=run, topic=topic, text=text, words=len(text.split())))
                Answer.objects.bulk_create(rows)
                ids.append(topic.id)
        self.stdout.write(f"built {topics} requests x {runs} reports ({name})")
        return ids

    def _measure(
        self, phase: str, job: Job, running: Workers, url: str, config: LLMConfig, options: dict
    ) -> tuple[float, float]:
        """Run the phase's job on the workers and print its figures; (its bound, its wall time) in seconds."""
        served_before = server_stats(url).get("requests_by_model", {}).get(config.model, 0)
        cpu_before = sum(process_cpu_seconds(worker.pid) for worker, _log in running)
        wall = self._wait(job, running)
        cpu = sum(process_cpu_seconds(worker.pid) for worker, _log in running) - cpu_before
        job.refresh_from_db()
        served = server_stats(url).get("requests_by_model", {}).get(config.model, 0) - served_before
        latency, concurrency = options["latency"], options["concurrency"]
        ideal = job.calls * latency / concurrency
        line = (
            f"{phase}: {job.total_items} items, {job.done_items} done, {job.failed_items} failed; {job.calls} calls "
            f"counted by the job, {served} by the server\n"
            f"  wall {wall:.1f} s; ideal (calls x latency / concurrency) {ideal:.1f} s"
        )
        bound = ideal
        if phase == "bank":
            # The calls of each topic's item, one after the other.
            chains = Counter(LLMCall.objects.filter(job=job, from_cache=False).values_list("item_id", flat=True))
            chain = max(chains.values(), default=0) * latency
            bound = max(ideal, chain)
            line += (
                f"; longest topic chain {max(chains.values(), default=0)} calls = {chain:.1f} s; "
                f"bound {bound:.1f} s ({bound / wall if wall else 0:.2f} of it)"
            )
        else:
            line += f" ({ideal / wall if wall else 0:.2f} of it)"
        line += f"; workers' CPU {cpu:.1f} s, {1000 * cpu / max(job.calls, 1):.1f} ms a call"
        self.stdout.write(line)
        return bound, wall

    def _again(self, queue: str, topics: list[str], config: LLMConfig, running: Workers) -> None:
        """Every phase again under other names, on the same workers: every answer from the cache, no call."""
        preferences = preferences_job_create(name=f"{queue}-prefs-again", topics=topics, queue=queue, config=config)
        self._wait(preferences, running)
        bank = prefnugget_job_create(
            name=f"{queue}-bank-again", preferences=preferences.output_name, topics=topics, queue=queue, config=config
        )
        self._wait(bank, running)
        grading = grades_job_create(
            name=f"{queue}-grades-again", bank=bank.output_name, topics=topics, queue=queue, config=config
        )
        self._wait(grading, running)
        for phase, job in (("preferences", preferences), ("bank", bank), ("grading", grading)):
            job.refresh_from_db()
            hits = LLMCall.objects.filter(job=job, from_cache=True).count()
            wall = (job.finished_at - job.created_at).total_seconds() if job.finished_at else 0.0
            self.stdout.write(
                f"{phase} again: {job.done_items}/{job.total_items} items, {job.calls} calls made, "
                f"{hits} answered from the cache, {wall:.1f} s"
            )

    def _wait(self, job: Job, running: Workers) -> float:
        """Dispatch the job to the workers and wait for its end; its wall time in seconds."""
        for worker, log in running:
            if worker.poll() is not None:
                raise CommandError(f"a worker stopped (exit {worker.returncode}); its log: {log}")
        started = time.monotonic()
        job_dispatch(job)
        while Job.objects.filter(pk=job.pk, status__in=["queued", "running"]).exists():
            time.sleep(0.1)
        return time.monotonic() - started
