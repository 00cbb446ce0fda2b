"""Load through gunicorn: simulated assessors saving labels at once, each on work of their own.

    manage.py bench_load [--assessors 20] [--seconds 30] [--pause 0.5] [--answers 40] [--nuggets 20]
                         [--web-workers N] [--web-threads N] [--connection-per-request]

In a throw-away database of the configured kind (a SQLite file, or `assessor_load_<pid>` on
PostgreSQL) each assessor gets ManualAssign on a topic of their own. `bin/serve web` serves it;
every assessor logs in over HTTP with a session of their own and then, for a fixed time, goes
through their answers saving one label per nugget as the judging page's script saves it (the
page's forms, the CSRF header, an operation id), waiting `--pause` seconds after each save as a
person does (0: as fast as the server answers). Each keeps its connection open, as a browser
does, or opens one for each request with `--connection-per-request`, as a proxy in front of the
site does by default. It prints saves/s, the latency percentiles of the saves, how many saves
each assessor made (a kept-alive connection stays with the process that accepted it), every
error, and checks that every acknowledged save is stored: its operation recorded and its label
in the table.
"""

import os
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.urls import reverse

from assessor.models import Answer, LabelSource, Run, Sentence, Topic, WorkOperation
from assessor.sources import source_claim
from assessor.work.roles import Role, roles_ensure, user_set_role
from assignment.judging import assign_work_give
from assignment.models import AssignmentLabel
from bench.http_site import Reply, SiteError, Visitor, label_forms, label_post
from bench.serving import ServedSite
from bench.throwaway import throwaway_database
from bench.tidy import database_tidied
from nuggets import kinds as nugget_kinds
from nuggets.models import Nugget, NuggetSet

PASSWORD = "bench-load-password"
LABELS = ["support", "partial_support", "not_support"]
TARGET_P95_MS = 100.0
TIMING_MARK = "bench-load-timing"
SERVE_SAYS = "bin/serve: "
# A save not answered by then counts as an error (the page's script would send it again).
SAVE_TIMEOUT_SECONDS = 30.0


@dataclass
class AssessorLoad:
    """What one simulated assessor did: the latency of each save, what the server acknowledged, errors."""

    username: str
    work_id: int
    save_ms: list[float] = field(default_factory=list)
    page_ms: list[float] = field(default_factory=list)
    acknowledged: list[tuple[str, str]] = field(default_factory=list)  # (operation id, label)
    errors: Counter = field(default_factory=Counter)
    ran_out: bool = False


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile: the smallest value with at least `share` of the values at or below it."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, -(-len(ordered) * share // 1))
    return ordered[int(rank) - 1]


def save_times_served(log: str) -> list[float]:
    """The time gunicorn spent on each label save (ms), from its access log in TIMING_MARK's format."""
    times = []
    for line in log.splitlines():
        words = line.split()
        if len(words) == 5 and words[0] == TIMING_MARK and words[1] == "POST" and words[2].endswith("/label/"):
            times.append(int(words[4]) / 1000)
    return times


class DatabaseCpu:
    """The CPU time PostgreSQL's server processes for this database spend while it runs, when they run on this
    machine: each found by its process title (`postgres: user database ...`) four times a second, so that one
    ended meanwhile (a connection older than CONN_MAX_AGE is closed and opened anew) loses a quarter second at
    most. None on SQLite (it runs in the web processes) or when no such process is found here."""

    def __init__(self) -> None:
        self.name = str(connection.settings_dict["NAME"]) if connection.vendor == "postgresql" else ""
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.started = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        if self.name:
            self._sample()
            self.started = True
            self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.25):
            self._sample()

    def _sample(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        for folder in Path("/proc").glob("[0-9]*"):
            try:
                words = (folder / "cmdline").read_bytes().replace(b"\0", b" ").split()
                # `postgres: [cluster:] user database host(port) state`
                if words[:1] != [b"postgres:"] or self.name.encode() not in words[1:4]:
                    continue
                fields = (folder / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended meanwhile
            seconds = (int(fields[11]) + int(fields[12])) / tick
            # A process first seen after the start began during the run: all of its time counts.
            self.first.setdefault(int(folder.name), 0.0 if self.started else seconds)
            self.last[int(folder.name)] = seconds

    def stop(self) -> float | None:
        if not self.started:
            return None
        self._stop.set()
        self._thread.join()
        self._sample()
        return sum(seconds - self.first[pid] for pid, seconds in self.last.items()) if self.last else None


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def assessor_ready(load: AssessorLoad, *, url: str, keep_alive: bool = True) -> tuple[Visitor, Reply] | None:
    """Logged in, on the first answer's page, as a person is before starting; None (an error counted) if not."""
    # Logins one after the other: each checks a password hash on purpose slowly, and twenty at
    # once on two cores would time out; they are not what is measured.
    visitor = Visitor(url, timeout=120, keep_alive=keep_alive)
    try:
        visitor.login(load.username, PASSWORD)
        page = visitor.get(reverse("judge:answer", args=[load.work_id, 1]))
    except (SiteError, OSError) as exc:
        load.errors[f"login {type(exc).__name__}"] += 1
        return None
    if page.status != 200:
        load.errors[f"page HTTP {page.status}"] += 1
        return None
    visitor.timeout = SAVE_TIMEOUT_SECONDS
    return visitor, page


def assessor_drive(
    load: AssessorLoad, visitor: Visitor, page: Reply, *, answers: int, start: threading.Barrier,
    until: list[float], pause: float,
) -> None:  # fmt: skip
    """From the first page on, save one label per nugget answer after answer until the time is up."""
    start.wait()
    number = 1
    while time.monotonic() < until[0]:
        forms, csrf = label_forms(page.text)
        for index, form in enumerate(forms):
            if time.monotonic() >= until[0]:
                break
            label = LABELS[(number + index) % len(LABELS)]
            operation = str(uuid.uuid4())
            begun = time.perf_counter()
            try:
                reply = label_post(visitor, form, csrf=csrf, label=label, op_id=operation)
            except OSError as exc:
                load.errors[f"save {type(exc).__name__}"] += 1
                continue
            load.save_ms.append((time.perf_counter() - begun) * 1000)
            if reply.status == 200 and reply.json().get("label") == label:
                load.acknowledged.append((operation, label))
            else:
                load.errors[f"save HTTP {reply.status}"] += 1
            if pause:
                time.sleep(pause)
        number += 1
        if number > answers:
            load.ran_out = True
            break
        if time.monotonic() >= until[0]:
            break
        begun = time.perf_counter()
        try:
            page = visitor.get(reverse("judge:answer", args=[load.work_id, number]))
        except OSError as exc:
            load.errors[f"page {type(exc).__name__}"] += 1
            break
        load.page_ms.append((time.perf_counter() - begun) * 1000)
        if page.status != 200:
            load.errors[f"page HTTP {page.status}"] += 1
            break
    visitor.close()


class Command(BaseCommand):
    help = "Simulated assessors saving labels through gunicorn at once: saves/s, latency, errors, lost saves."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--assessors", type=int, default=20)
        parser.add_argument("--seconds", type=float, default=30.0, help="how long the assessors save labels")
        parser.add_argument("--pause", type=float, default=0.5, help="seconds an assessor waits after each save")
        parser.add_argument("--answers", type=int, default=40, help="answers on each assessor's topic")
        parser.add_argument("--nuggets", type=int, default=20, help="nuggets on each assessor's topic")
        parser.add_argument("--web-workers", default="", help="gunicorn processes (default: bin/serve's)")
        parser.add_argument("--web-threads", default="", help="threads per process (default: bin/serve's)")
        parser.add_argument(
            "--connection-per-request",
            action="store_true",
            help="a new connection for each request, as a proxy in front opens them by default (browsers keep theirs)",
        )

    def handle(self, *args, **options) -> None:
        with tempfile.TemporaryDirectory(prefix="assessor-load-") as scratch:
            folder = Path(scratch)
            with throwaway_database(folder, prefix="assessor_load"):
                loads = self._build(options)
                self.stdout.write(database_tidied())
                self._run(folder, loads, options)

    def _build(self, options: dict) -> list[AssessorLoad]:
        """A topic of its own for each assessor, with ManualAssign on it given."""
        with transaction.atomic():
            roles_ensure()
            organizer = User.objects.create(username="bench-load-organizer")
            user_set_role(organizer, Role.ORGANIZER)
            source = source_claim(family=nugget_kinds.LABEL_FAMILY, name="manual", kind=LabelSource.Kind.PERSON)
            runs = Run.objects.bulk_create(Run(run_id=f"bench-load-run-{r:03d}") for r in range(options["answers"]))
            password = make_password(PASSWORD)
            loads = []
            for i in range(options["assessors"]):
                assessor = User.objects.create(username=f"bench-load-assessor-{i:02d}", password=password)
                user_set_role(assessor, Role.ASSESSOR)
                topic = Topic.objects.create(id=f"bench-load-{i:02d}", query=f"what does assessor {i} judge")
                texts = [f"Answer sentence {s} of about a dozen words states a fact." for s in range(3)]
                answers = Answer.objects.bulk_create(
                    Answer(run=run, topic=topic, text=" ".join(texts), words=30) for run in runs
                )
                Sentence.objects.bulk_create(
                    Sentence(answer=answer, index=s, text=text) for answer in answers for s, text in enumerate(texts)
                )
                nugget_set = NuggetSet.objects.create(
                    topic=topic, kind=NuggetSet.Kind.MANUAL, name="manual", source=source, created_by=assessor
                )
                Nugget.objects.bulk_create(
                    Nugget(nugget_set=nugget_set, position=n, text=f"nugget {n} of the topic", importance="vital",
                           created_by=assessor)
                    for n in range(options["nuggets"])
                )  # fmt: skip
                work = assign_work_give(topic=topic, assessor=assessor, by=organizer)
                loads.append(AssessorLoad(assessor.username, work.pk))
        return loads

    def _run(self, folder: Path, loads: list[AssessorLoad], options: dict) -> None:
        sizes = {"WEB_WORKERS": options["web_workers"], "WEB_THREADS": options["web_threads"]}
        site = ServedSite(
            role="web",
            var_dir=folder / "var",
            log=folder / "serve.log",
            # Each request's own time in gunicorn, beside the method and path, to tell it from waiting outside.
            GUNICORN_CMD_ARGS=f"--access-logformat '{TIMING_MARK} %(m)s %(U)s %(s)s %(D)s'",
            **{name: value for name, value in sizes.items() if value},
        )
        try:
            site.wait_ready()
            keep_alive = not options["connection_per_request"]
            ready = [(load, assessor_ready(load, url=site.url, keep_alive=keep_alive)) for load in loads]
            drivers = [(load, started) for load, started in ready if started is not None]
            before = load_average()
            start = threading.Barrier(len(drivers) + 1)
            until = [float("inf")]
            threads = [
                threading.Thread(
                    target=assessor_drive,
                    args=(load, visitor, page),
                    kwargs={"answers": options["answers"], "start": start, "until": until, "pause": options["pause"]},
                )
                for load, (visitor, page) in drivers
            ]
            for thread in threads:
                thread.start()
            cpu_before = site.cpu_seconds()
            database = DatabaseCpu()
            database.start()
            own_before = time.process_time()
            start.wait()
            began = time.monotonic()
            until[0] = began + options["seconds"]
            for thread in threads:
                thread.join()
            elapsed = time.monotonic() - began
            server_cpu = site.cpu_seconds() - cpu_before
            own_cpu = time.process_time() - own_before
            database_cpu = database.stop()
            server_save_ms = save_times_served(site.log.read_text(errors="replace"))
            after = load_average()
            served_with = self._served_with(site)
        except (SiteError, RuntimeError):
            self.stderr.write(site.log_tail())
            raise
        finally:
            site.stop()
        self._report(
            loads,
            options,
            elapsed=elapsed,
            before=before,
            after=after,
            served_with=served_with,
            server_cpu=server_cpu,
            server_save_ms=server_save_ms,
            database_cpu=database_cpu,
            own_cpu=own_cpu,
        )

    def _served_with(self, site: ServedSite) -> str:
        """What bin/serve says it started (its defaults live there only)."""
        for line in site.log.read_text(errors="replace").splitlines():
            if line.startswith(SERVE_SAYS):
                return line.removeprefix(SERVE_SAYS)
        return "gunicorn"

    def _report(
        self,
        loads: list[AssessorLoad],
        options: dict,
        *,
        elapsed: float,
        before: str,
        after: str,
        served_with: str,
        server_cpu: float,
        server_save_ms: list[float],
        database_cpu: float | None,
        own_cpu: float,
    ) -> None:
        saves = [ms for load in loads for ms in load.save_ms]
        pages = [ms for load in loads for ms in load.page_ms]
        acknowledged = sum(len(load.acknowledged) for load in loads)
        errors: Counter = sum((load.errors for load in loads), Counter())
        operations_missing, labels_missing, unacknowledged = self._verify(loads)
        lost = max(operations_missing, labels_missing)
        p95 = percentile(saves, 0.95)
        out = self.stdout.write
        out(
            f"bench_load: {len(loads)} assessors for {options['seconds']:.0f} s, pause {options['pause']} s after "
            f"each save, on {connection.vendor}; {served_with}; {os.cpu_count()} CPUs, load average "
            f"{before} before, {after} after"
        )
        out(f"label saves: {acknowledged} acknowledged in {elapsed:.1f} s = {acknowledged / elapsed:.1f} saves/s")
        out(
            f"save latency ms: p50 {percentile(saves, 0.50):.1f}  p95 {p95:.1f}  p99 {percentile(saves, 0.99):.1f}  "
            f"max {max(saves, default=float('nan')):.1f}"
        )
        out(
            f"save time in gunicorn ms: p50 {percentile(server_save_ms, 0.50):.1f}  "
            f"p95 {percentile(server_save_ms, 0.95):.1f}  p99 {percentile(server_save_ms, 0.99):.1f} "
            f"(request read to response written; the rest is waiting for a core or a connection)"
        )
        each_saves = sorted(len(load.save_ms) for load in loads)
        if each_saves:
            out(
                f"saves an assessor: least {each_saves[0]}, median {each_saves[len(each_saves) // 2]}, most "
                f"{each_saves[-1]} (a kept-alive connection is served by the gunicorn process that accepted it)"
            )
        requests = len(saves) + len(pages)
        out(
            f"server CPU: {server_cpu:.1f} s in all gunicorn processes, {server_cpu * 1000 / max(1, requests):.1f} ms "
            f"a request ({requests} requests): the cost of a request whatever the machine's load"
        )
        database = (
            f"{database_cpu:.1f} s in the database's server processes, {database_cpu * 1000 / max(1, requests):.1f} ms "
            "a request"
            if database_cpu is not None
            else "not measured (SQLite runs in the web processes, or PostgreSQL on another machine)"
        )
        out(
            f"database CPU: {database}; load generator CPU: {own_cpu * 1000 / max(1, requests):.1f} ms a request "
            f"(this command's clients, on the same cores)"
        )
        if database_cpu is not None:
            each = (server_cpu + database_cpu + own_cpu) / max(1, requests)
            out(
                f"all three: {each * 1000:.1f} ms of CPU a request, so at most {(os.cpu_count() or 1) / each:.0f} "
                f"requests/s on {os.cpu_count()} idle cores"
            )
        out(
            f"answer pages after the first: {len(pages)}, latency ms p50 {percentile(pages, 0.50):.1f}  p95 {percentile(pages, 0.95):.1f}"
        )
        out(
            f"errors: {sum(errors.values())}"
            + (f" ({', '.join(f'{k}: {v}' for k, v in errors.items())})" if errors else "")
        )
        out(
            f"lost saves: {lost} (acknowledged operations not recorded: {operations_missing}, acknowledged labels "
            f"not stored: {labels_missing}); labels stored without an acknowledgement: {unacknowledged}"
        )
        if any(load.ran_out for load in loads):
            out("some assessors finished their topic before the time was up: give more --answers")
        verdict = "met" if p95 < TARGET_P95_MS and not errors and not lost else "NOT met"
        out(f"target (no error, no lost save, p95 < {TARGET_P95_MS:.0f} ms): {verdict}")

    def _verify(self, loads: list[AssessorLoad]) -> tuple[int, int, int]:
        """(acknowledged operations not recorded, acknowledged labels not stored, labels stored that no
        reply acknowledged).

        Each save labels a pair nobody labelled before, so an assessor's stored labels must be
        exactly their acknowledged ones, and each acknowledged operation id must be recorded.
        """
        operations_missing = labels_missing = unacknowledged = 0
        for load in loads:
            operations = set(WorkOperation.objects.filter(work_id=load.work_id).values_list("op_id", flat=True))
            operations_missing += sum(1 for operation, _ in load.acknowledged if operation not in operations)
            stored = Counter(AssignmentLabel.objects.filter(work_id=load.work_id).values_list("label", flat=True))
            expected = Counter(label for _, label in load.acknowledged)
            labels_missing += sum((expected - stored).values())
            unacknowledged += sum((stored - expected).values())
        return operations_missing, labels_missing, unacknowledged
