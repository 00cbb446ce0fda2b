"""Benchmark of ARGUE-style judging: the LLM job through real Celery workers against the local fake LLM server,
and the people's sentence page and its save at the same size.

    manage.py bench_argue [--topics 68] [--runs 57] [--sentences 20] [--questions 10] [--skip-llm] [--skip-page]

Builds a request set (bench.argue_data: each sentence cites 2 documents and is asked 2 gold answers) under fresh
names in the configured database (use a scratch one, as for bench_llm). The LLM part runs one ARGUE-style job
and prints the calls the job and the server counted, its wall time against the ideal (calls x latency /
concurrency) and the workers' CPU per call. The page part gives one topic's judging to an assessor and times the
sentence page and a judgment's save (through the test client, and straight to the WSGI application as gunicorn
calls it), inside a transaction that is rolled back.
"""

import time
import uuid
from collections.abc import Callable
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.test import Client
from django.urls import reverse

from argue.judging import argue_work_give, sentence_page_load
from argue.llm import argue_job_create
from assessor.jobs.engine import job_dispatch
from assessor.jobs.llm.client import LLMConfig
from assessor.models import Job, Topic
from assessor.work.roles import Role, roles_ensure, user_set_role
from bench.argue_data import argue_set_build
from bench.management.commands.bench_judging import FORM, ServedPost
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
from bench.request_bench import TARGET_MS, requests_time, response_ok
from bench.tidy import bench_leftovers, database_tidied


class Command(BaseCommand):
    help = "Benchmark the ARGUE-style LLM job (real Celery workers, fake LLM server) and the people's save."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--topics", type=int, default=68, help="requests (default 68, as Rag4Reports)")
        parser.add_argument("--runs", type=int, default=57, help="reports per request (default 57)")
        parser.add_argument("--sentences", type=int, default=20, help="sentences per report (default 20)")
        parser.add_argument("--questions", type=int, default=10, help="questions per bank, 2 answers each (default 10)")
        worker_arguments(parser)
        parser.add_argument("--repeat", type=int, default=30, help="timed requests of the page part")
        parser.add_argument("--skip-llm", action="store_true", help="only the page part")
        parser.add_argument("--skip-page", action="store_true", help="only the LLM part")

    def handle(self, *args, **options) -> None:
        self.stdout.write(f"load average at the start: {load_average()}")
        self.stdout.write(bench_leftovers())
        if not options["skip_llm"]:
            self._llm(options)
        if not options["skip_page"]:
            self._page(options)
        self.stdout.write(f"load average at the end: {load_average()}")

    # --- the LLM job -------------------------------------------------------------------------------------

    def _llm(self, options: dict) -> None:
        redis_url = workers_broker("bench_argue", options["redis"])
        tag = uuid.uuid4().hex[:8]
        built = argue_set_build(
            tag=tag,
            topics=options["topics"],
            runs=options["runs"],
            sentences=options["sentences"],
            questions=options["questions"],
        )
        self.stdout.write(
            f"built {options['topics']} requests x {options['runs']} reports of {options['sentences']} sentences, "
            f"banks of {options['questions']} questions (bench-{tag})"
        )
        self.stdout.write(database_tidied())
        server, url = fake_server_start(options["latency"])
        try:
            config = LLMConfig(model=f"bench-{tag}-argue", base_url=url, concurrency=options["concurrency"])
            queue = f"bench-{tag}"
            job = argue_job_create(name=queue, bank=built.bank, topics=built.topics, queue=queue, config=config)
            env = worker_env(url=url, redis_url=redis_url, concurrency=options["concurrency"])
            running = workers_start(options["workers"], queue, env, options["threads"] or 2 * options["concurrency"])
            try:
                cpu_before = sum(process_cpu_seconds(worker.pid) for worker, _log in running)
                started = time.monotonic()
                job_dispatch(job)
                while Job.objects.filter(pk=job.pk, status__in=["queued", "running"]).exists():
                    time.sleep(0.2)
                wall = time.monotonic() - started
                cpu = sum(process_cpu_seconds(worker.pid) for worker, _log in running) - cpu_before
            finally:
                workers_stop(running)
            job.refresh_from_db()
            served = server_stats(url).get("requests_by_model", {}).get(config.model, 0)
        finally:
            stats = fake_server_stop(server)
        ideal = job.calls * options["latency"] / options["concurrency"]
        self.stdout.write(
            f"{job.total_items} reports: {job.done_items} done, {job.failed_items} failed; {job.calls} calls counted "
            f"by the job, {served} by the server\n"
            f"wall {wall:.1f} s against the ideal {ideal:.1f} s ({ideal / wall if wall else 0:.2f} of it); "
            f"workers' CPU {cpu:.1f} s, {1000 * cpu / max(job.calls, 1):.1f} ms a call"
        )
        self.stdout.write(f"test server: {stats} (the limit was {options['concurrency']})")

    # --- the people's page -------------------------------------------------------------------------------

    def _page(self, options: dict) -> None:
        self.stdout.write(database_tidied())
        with transaction.atomic():
            roles_ensure()
            tag = uuid.uuid4().hex[:8]
            built = argue_set_build(
                tag=tag, topics=1, runs=options["runs"], sentences=options["sentences"], questions=options["questions"]
            )
            assessor = User.objects.create(username=f"bench-argue-assessor-{tag}")
            user_set_role(assessor, Role.ASSESSOR)
            work = argue_work_give(topic=Topic.objects.get(pk=built.topics[0]), assessor=assessor, by=None)
            self.stdout.write(database_tidied())
            page = sentence_page_load(work=work, number=1)
            assert page is not None
            client = Client()
            client.force_login(assessor)
            served = ServedPost(client)
            state = {"label": ""}
            row = page.rows[0].key

            def save(post: Callable[[str, dict], tuple[int, bytes]]) -> None:
                label = "yes" if state["label"] != "yes" else "no"
                status, content = post(
                    reverse("argue:label", args=[work.pk, 1]),
                    {
                        "sentence": page.index,
                        "row": row,
                        "answer": page.token,
                        "label": label,
                        "previous": state["label"],
                        "version": work.version,
                        "op_id": str(uuid.uuid4()),
                    },
                )
                assert status == 200, content[:300]
                state["label"] = label

            def client_post(path: str, fields: dict) -> tuple[int, bytes]:
                response = client.post(path, urlencode(fields), content_type=FORM, HTTP_ACCEPT="application/json")
                return response.status_code, response.content

            timings = requests_time(
                {
                    "sentence page": lambda: response_ok(client.get(reverse("argue:sentence", args=[work.pk, 1]))),
                    "judgment save": lambda: save(client_post),
                    "judgment save (WSGI)": lambda: save(served),
                },
                repeat=max(1, options["repeat"]),
            )
            transaction.set_rollback(True)
        self.stdout.write(
            f"people's page, one topic of {options['runs']} reports x {options['sentences']} sentences, "
            f"{page.total_answers} sentence pages ({connection.vendor}, target < {TARGET_MS:.0f} ms):"
        )
        for name, timing in timings.items():
            flag = "" if timing.median_ms < TARGET_MS else "  over target"
            self.stdout.write(
                f"  {name:<24}median {timing.median_ms:.1f} ms, p95 {timing.p95_ms:.1f} ms, cpu {timing.cpu_ms:.1f} ms, "
                f"{timing.queries} queries{flag}"
            )
