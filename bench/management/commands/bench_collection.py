"""Time the imports and the scoring of a collection at TREC 2024 RAG scale.

By default it works in a throw-away database of the configured kind (a file
in the benchmark folder for SQLite, `assessor_bench_<pid>` on PostgreSQL), made and
dropped like a test database, so that the real data is never touched.
"""

import gc
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from assessor.project.celery import celery_task
from assignment import kinds as assignment_kinds
from bench.collection_data import Measure, benchmark_collection_build, measured
from bench.throwaway import throwaway_database
from bench.tidy import database_tidied
from nuggets import kinds as nugget_kinds

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.test import Client

    from assessor.models import Run, Topic

BENCH_DATABASE = "assessor_bench"
# The comparisons the worker computes at once after a run's import: both conditions on two metrics, both
# support methods (each reads its two sources' kept scores and labels).
WORKER_COMPARISONS = (
    {"a": "auto_edit/manual", "b": "auto_edit/auto", "metric": "Vstrict"},
    {"a": "auto_edit/manual", "b": "auto_edit/auto", "metric": "A"},
    {"a": "support:scratch", "b": "support:auto", "metric": "precision"},
)
WORKER_PATIENCE_SECONDS = 900


def _database_url() -> str:
    """The URL of the database this process uses (a throw-away one's too), for a worker started from here."""
    settings_dict = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings_dict['NAME']}"
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    return (
        f"postgres://{settings_dict['USER']}{password}@{settings_dict['HOST'] or 'localhost'}:"
        f"{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"
    )


def _memory_of(pid: int) -> dict[str, str]:
    """A process's peak (VmHWM) and current (VmRSS) resident memory, as /proc says them, in MiB."""
    figures = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmHWM", "VmRSS"):
            figures[name] = f"{int(value.split()[0]) / 1024:.0f} MiB"
    return figures


def _waited(done: Callable[[], str | None], *, what: str, worker: subprocess.Popen) -> str:
    """Poll until `done` says how it ended; fails if the worker stops or takes too long."""
    deadline = time.monotonic() + WORKER_PATIENCE_SECONDS
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            raise CommandError(f"the worker stopped (exit {worker.returncode}) before {what} ended")
        ended = done()
        if ended is not None:
            return ended
        time.sleep(0.5)
    raise CommandError(f"{what} did not end in {WORKER_PATIENCE_SECONDS} s")


def _upload_finished(upload_pk: int) -> str | None:
    from assessor.models import Upload

    upload = Upload.objects.get(pk=upload_pk)
    if upload.state in (Upload.State.DONE, Upload.State.FAILED):
        return f"{upload.state}{': ' + upload.error if upload.error else ''}"
    return None


def _comparisons_stale(queries: Sequence[dict[str, str]]) -> list[str]:
    """Each query's kept comparison, made anew as asked for and never computed (as a view asks a worker)."""
    from django.utils import timezone

    from metaeval.comparison_page import kept_query
    from metaeval.models import KeptComparison

    keys = []
    for query in queries:
        kept = kept_query(query)
        if kept is None:
            raise CommandError(f"the comparison {query} is not kept: the collection lacks a source")
        KeptComparison.objects.filter(key=kept.key).delete()
        KeptComparison.objects.create(
            key=kept.key, query=kept.query, viewed_at=timezone.now(), queued_at=timezone.now()
        )
        keys.append(kept.key)
    return keys


def _comparisons_current(keys: list[str]) -> str | None:
    from metaeval.models import KeptComparison

    rows = KeptComparison.objects.filter(key__in=keys, computed_at__isnull=False).count()
    return "computed" if rows == len(keys) else None


class Command(BaseCommand):
    help = "Build a TREC-scale collection, import it, score it, and print times and peak memory."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--topics", type=int, default=301)
        parser.add_argument("--runs", type=int, default=146)
        parser.add_argument("--nuggets", type=int, default=20)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--folder", type=Path, default=None, help="where to write the files (default: a temporary folder)"
        )
        parser.add_argument("--repeat", type=int, default=5, help="requests timed per page (the median is shown)")
        parser.add_argument(
            "--pages-only",
            action="store_true",
            help="time the pages and refreshes of the collection already in the configured database, importing nothing",
        )
        parser.add_argument(
            "--worker-only",
            action="store_true",
            help="measure only a real worker's peak memory (a run's upload, then three comparisons at once) on the "
            "collection already in the configured database",
        )
        parser.add_argument(
            "--no-worker",
            action="store_true",
            help="leave out the worker's memory (it needs a database and a broker another process can reach, "
            "with the collection committed: not a test's)",
        )
        parser.add_argument(
            "--in-place",
            action="store_true",
            help="import into the configured database itself (it must hold no topics) instead of a throw-away one",
        )

    def handle(self, *args, **options) -> None:
        self.repeat = options["repeat"]
        self.worker = not options["no_worker"]
        if options["worker_only"]:
            self._say(f"database: {connection.vendor}; load average {self._load()} on {os.cpu_count()} CPUs")
            runs = sorted((options["folder"] or Path(".")).glob("runs/*.jsonl"))
            if not runs:
                raise CommandError("--worker-only needs --folder: the benchmark's files, whose first run is stored")
            self._worker_memory(runs[0])
            return
        if options["pages_only"]:
            load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
            self._say(f"database: {connection.vendor}; load average {load} on {os.cpu_count()} CPUs")
            self._pages(repeat=self.repeat)
            return
        with tempfile.TemporaryDirectory(prefix="assessor-bench-") as scratch:
            folder = options["folder"] or Path(scratch)
            load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
            self._say(f"database: {connection.vendor}; files in {folder}; load average {load} on {os.cpu_count()} CPUs")
            measure, paths = measured(
                "build the files",
                lambda: benchmark_collection_build(
                    folder=folder,
                    topics=options["topics"],
                    runs=options["runs"],
                    nuggets=options["nuggets"],
                    seed=options["seed"],
                ),
            )
            self._say(measure.line())
            if options["in_place"]:
                self._bench(paths)
            else:
                with throwaway_database(folder, prefix=BENCH_DATABASE):
                    self._bench(paths)

    def _bench(self, paths: dict) -> None:
        from assessor.models import Topic

        if Topic.objects.exists():
            raise CommandError("the database already holds topics: benchmark an empty one")
        for step in self._import_steps(paths):
            self._say(step.line())
        # The scorers read what the imports wrote a moment ago: as a served database would hold it by then.
        self._say(database_tidied())
        for step in self._scoring_steps():
            self._say(step.line())
        for step in self._run_import_steps(Path(paths["runs"][0])):
            self._say(step.line())
        self._pages(repeat=self.repeat)
        if self.worker:
            self._worker_memory(Path(paths["runs"][0]))
        else:
            self._say("worker memory: not measured (--no-worker)")
        self._say(self._database_size())

    def _import(self, command: str, *arguments: str, label: str = "") -> Measure:
        step = f"{command} {label}".strip()
        if command not in get_commands():
            return Measure(step=step, seconds=0.0, peak_rss_mib=0.0, note="skipped: command not available")
        out = io.StringIO()
        measure, _ = measured(step, lambda: call_command(command, *arguments, stdout=out, stderr=out))
        summary = out.getvalue().strip().splitlines()[-1] if out.getvalue().strip() else ""
        # The summary starts with the file's path: the step already says which file.
        measure.note = summary.removeprefix(f"{arguments[0]}: ")
        return measure

    def _import_steps(self, paths: dict):
        yield self._import("import_topics", str(paths["topics"]))
        yield self._import("import_segments", str(paths["segments"]))
        yield self._import("import_qrels", str(paths["qrels"]), "--source", "nist")
        run_measures = [self._import("import_run", str(path)) for path in paths["runs"]]
        seconds = [m.seconds for m in run_measures]
        yield Measure(
            step=f"import_run x{len(run_measures)}",
            seconds=sum(seconds),
            cpu_seconds=sum(m.cpu_seconds for m in run_measures),
            peak_rss_mib=max(m.peak_rss_mib for m in run_measures),
            note=f"mean {statistics.mean(seconds):.2f} s, slowest {max(seconds):.2f} s a run",
        )
        for condition in ("manual", "auto"):
            yield self._import(
                "import_assignments",
                str(paths[f"assignments_{condition}"]),
                "--nuggets",
                "auto_edit",
                "--assigner",
                condition,
                label=f"({condition})",
            )
        yield self._import("import_support", str(paths["support_scratch"]), "--method", "scratch", label="(scratch)")
        yield self._import("import_support", str(paths["support_auto"]), "--method", "auto", label="(auto)")

    def _run_import_steps(self, run_file: Path):
        """One run imported into the collection whose labels and kept scores are in: a new run (its answers have
        no labels, so no kept figure changes), then a stored run again with --replace, every answer's last
        sentence reworded (each answer rewritten: every kept source's rows of those answers refreshed)."""
        records = [json.loads(line) for line in run_file.read_text().splitlines() if line.strip()]
        new = run_file.with_name("bench-new-run.jsonl")
        new.write_text("".join(json.dumps({**record, "run_id": "bench-new-run"}) + "\n" for record in records))
        yield self._import("import_run", str(new), label=f"(a new run, {len(records)} answers, kept scores in)")
        revised = run_file.with_name("bench-revised-run.jsonl")
        for record in records:
            if record["answer"]:
                record["answer"][-1]["text"] += " Revised."
        revised.write_text("".join(json.dumps(record) + "\n" for record in records))
        yield self._import(
            "import_run", str(revised), "--replace", label=f"(a stored run replaced, {len(records)} answers rewritten)"
        )

    def _scoring_steps(self):
        from assignment.selectors import nugget_scores
        from support.selectors import support_scores

        scorers = (
            ("nugget_scores(auto_edit, manual)", lambda: nugget_scores(nuggets="auto_edit", assigner="manual")),
            ("support_scores(scratch)", lambda: support_scores(method="scratch")),
        )
        for name, score in scorers:
            try:
                measure, scores = measured(name, score)
            except LookupError as missing:
                yield Measure(step=name, seconds=0.0, peak_rss_mib=0.0, note=f"skipped: {missing}")
                continue
            measure.note = f"{len(scores.per_topic)} answers, {len(scores.run_means)} runs"
            yield measure
            # Tracing Python allocations slows the code down: a second, traced pass.
            traced, _ = measured(name + " (traced)", score, trace=True)
            yield traced

    def _vacuumed_as_autovacuum_would(self) -> None:
        """On PostgreSQL, the tables as autovacuum keeps them. Each refresh rewrites kept rows (a topic's refresh
        every run's means), and the dead rows it leaves are read past until a vacuum; where autovacuum is off
        (a test server), the figures would be those of a table no production server lets grow. Where it is on, it
        may not have passed yet: vacuumed in any case, so that every run measures the same state."""
        dead = ""
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SHOW autovacuum")
                (autovacuum,) = cursor.fetchone()
                cursor.execute("SELECT coalesce(sum(n_dead_tup), 0) FROM pg_stat_user_tables")
                (count,) = cursor.fetchone()
            dead = f" (autovacuum: {autovacuum}; {count} dead rows before)"
        self._say(database_tidied() + dead)

    def _pages(self, *, repeat: int) -> None:
        """Server time and queries of each organizer page (the kept scores), and of a label save with its refresh."""
        self._vacuumed_as_autovacuum_would()
        # The served process has its loaded objects frozen (assessor/project/wsgi.py): so has this one.
        gc.collect()
        gc.freeze()
        from django.test import Client
        from django.test.utils import override_settings

        from assessor.models import Answer, Run, Topic
        from bench.request_bench import requests_time, response_ok

        organizer, assessor = _bench_users()
        topic = Topic.objects.order_by("pk").first()
        run = Run.objects.order_by("run_id").first()
        if topic is None or run is None or not Answer.objects.exists():
            self._say("pages: skipped, the collection has no answers")
            return
        client = Client()
        client.force_login(organizer)
        reads = _page_reads(client, topic=topic, run=run)
        pages = {
            **reads,
            "run, after one source changed": _run_after_a_change(reads["run"]),
            **_comparison_steps(client, comparison_get=reads["meta-evaluation, a comparison"]),
            "label save (open work)": _label_save(organizer=organizer, assessor=assessor, topic=topic),
            **_refresh_steps(topic),
        }
        with override_settings(ALLOWED_HOSTS=["testserver"]):
            # Kept before it is timed: at this size its first view asks a worker, and none runs here.
            response_ok(client.get(_comparison_url() + "&here=1"))
            timings = requests_time(pages, repeat=repeat)
        self._say(f"{'request':<60}{'median ms':>10}{'cpu ms':>8}{'queries':>9}")
        for name, timing in timings.items():
            self._say(f"{name:<60}{timing.median_ms:>10.1f}{timing.cpu_ms:>8.1f}{timing.queries:>9}")

    def _load(self) -> str:
        return ", ".join(f"{value:.1f}" for value in os.getloadavg())

    def _worker_memory(self, run_file: Path) -> None:
        """A real worker's peak memory: `celery -A assessor worker` as bin/serve runs it (threads, LLM_CONCURRENCY
        of them), on this database, given a stored run's upload with --replace (its kept scores refreshed, every
        comparison stale), then three comparisons asked for at once. Its own queue, so that no other worker
        takes the tasks."""
        from metaeval.comparison_page import COMPUTE_TASK

        queue = f"bench-worker-{os.getpid()}"
        worker = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("celery")),
                "-A",
                "assessor",
                "worker",
                "--pool",
                "threads",
                "--concurrency",
                str(settings.LLM_CONCURRENCY),
                "--hostname",
                f"{queue}@%h",
                "--queues",
                queue,
                "--without-gossip",
                "--without-mingle",
                "-l",
                "warning",
            ],
            env={**os.environ, "DATABASE_URL": _database_url(), "CELERY_QUEUE": queue},
        )
        try:
            started = time.perf_counter()
            upload = self._upload_queued(self._run_file_revised(run_file, run_file.parent), queue=queue)
            state = _waited(lambda: _upload_finished(upload), what="the upload", worker=worker)
            imported = time.perf_counter() - started
            after_import = _memory_of(worker.pid)
            keys = _comparisons_stale(WORKER_COMPARISONS)
            started = time.perf_counter()
            for key in keys:
                celery_task(COMPUTE_TASK).apply_async(args=[key], queue=queue)
            _waited(lambda: _comparisons_current(keys), what="the comparisons", worker=worker)
            computed = time.perf_counter() - started
            peak = _memory_of(worker.pid)
            self._say(f"worker (celery, {settings.LLM_CONCURRENCY} threads; load average {self._load()}):")
            self._say(
                f"  a stored run uploaded with --replace: {state} in {imported:.1f} s, peak {after_import['VmHWM']}"
            )
            self._say(
                f"  then {len(keys)} comparisons asked for at once: computed in {computed:.1f} s, "
                f"peak {peak['VmHWM']} (resident at the end {peak['VmRSS']})"
            )
        finally:
            # A warm shutdown waits for the tasks under way (the warm-up the import asked for): not for long.
            worker.terminate()
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()
                worker.wait()

    def _run_file_revised(self, run_file: Path, folder: Path) -> Path:
        """The run file with every answer's last sentence reworded anew (a stored run replaced)."""
        path = folder / f"worker-{run_file.name}"
        revision = uuid.uuid4().hex[:8]
        with path.open("w") as handle:
            for line in run_file.read_text().splitlines():
                if line.strip():
                    record = json.loads(line)
                    if record["answer"]:
                        record["answer"][-1]["text"] += f" Revised {revision}."
                    handle.write(json.dumps(record) + "\n")
        return path

    def _upload_queued(self, path: Path, *, queue: str) -> int:
        from django.core.files.uploadedfile import SimpleUploadedFile

        from assessor.collection.uploads import UPLOAD_TASK, upload_store
        from assessor.models import Upload

        upload = upload_store(
            uploaded=SimpleUploadedFile(path.name, path.read_bytes()),
            kind="run",
            options={"replace": True},
            user=None,
        )
        assert isinstance(upload, Upload)
        celery_task(UPLOAD_TASK).apply_async(args=[upload.pk], queue=queue)
        return upload.pk

    def _database_size(self) -> str:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT pg_database_size(current_database())")
            elif connection.vendor == "sqlite":
                cursor.execute("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")
            else:
                return "database size: unknown"
            (size,) = cursor.fetchone()
        return f"database size: {size / 2**20:.0f} MiB"

    def _say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()


# --- The timed requests of `_pages`, each a call with no argument ------------------------------------------------

Step = Callable[[], None]


def _comparison_url() -> str:
    from django.urls import reverse

    return reverse("metaeval:index") + "?a=auto_edit/manual&b=auto_edit/auto&metric=Vstrict"


def _bench_users() -> "tuple[User, User]":
    """The organizer and the assessor of the timed requests, made once: a second run on the same collection
    (--pages-only) takes them and their work again."""
    from django.contrib.auth.models import User

    from assessor.work.roles import Role, user_set_role

    organizer, _ = User.objects.get_or_create(username="bench-collection-organizer")
    user_set_role(organizer, Role.ORGANIZER)
    assessor, _ = User.objects.get_or_create(username="bench-collection-assessor")
    user_set_role(assessor, Role.ASSESSOR)
    return organizer, assessor


def _page_reads(client: "Client", *, topic: "Topic", run: "Run") -> dict[str, Step]:
    """The organizer's pages and a download, each read whole."""
    from django.urls import reverse

    from bench.request_bench import response_ok

    def get(url: str) -> Step:
        return lambda: response_ok(client.get(url))

    def download(url: str) -> Step:
        def read() -> None:
            response = client.get(url)
            response_ok(response)
            b"".join(response.streaming_content)  # type: ignore[attr-defined]

        return read

    return {
        "home": get(reverse("home")),
        "topics": get(reverse("collection:topics")),
        "topic": get(reverse("collection:topic", args=[topic.pk])),
        "runs": get(reverse("collection:runs")),
        "run": get(reverse("collection:run", args=[run.run_id])),
        "leaderboards": get(reverse("collection:leaderboards")),
        "condition leaderboard": get(reverse("assignment:leaderboard") + "?nuggets=auto_edit&assigner=manual"),
        "support leaderboard": get(reverse("collection:support_leaderboard") + "?method=scratch"),
        "meta-evaluation": get(reverse("metaeval:index")),
        "meta-evaluation, a comparison": get(_comparison_url()),
        "scores download": download(reverse("collection:download_scores", args=["auto_edit", "manual"])),
    }


def _run_after_a_change(run_get: Step) -> Step:
    from assessor.models import KeptSource

    def run_after_a_change() -> None:
        # One source's refresh (its new stamp, written here): the view reads and renders that source again.
        KeptSource.objects.filter(pk=KeptSource.objects.order_by("pk").values("pk")[:1]).update(stamp=uuid.uuid4().hex)
        run_get()

    return run_after_a_change


def _comparison_steps(client: "Client", *, comparison_get: Step) -> dict[str, Step]:
    """The kept comparison once its sources changed: viewed stale, computed again, and a large one's first view."""
    from django.utils import timezone

    from assessor.models import KeptSource
    from bench.request_bench import response_ok
    from metaeval.comparison_page import comparison_compute, kept_query
    from metaeval.models import KeptComparison

    def sources_changed() -> None:
        # A refresh gives the sources new stamps: the kept comparison is stale. Marked as asked for
        # already, so that the view sends no task to the broker (a worker of another site could take it).
        KeptSource.objects.update(stamp=uuid.uuid4().hex)
        KeptComparison.objects.update(queued_at=timezone.now())

    changed: list[bool] = []

    def comparison_after_a_change() -> None:
        # The change is made once, by the first (untimed) call: the timed views are the view alone.
        if not changed:
            sources_changed()
            changed.append(True)
        comparison_get()

    def comparison_computed_again() -> None:
        sources_changed()
        for key in KeptComparison.objects.filter(query__metric="Vstrict").values_list("key", flat=True):
            assert comparison_compute(key)

    def comparison_asked_first() -> None:
        # A comparison never computed, of sources this large: the view asks a worker and says so. Its row
        # made as the view makes it, asked for already (no task to the broker, as above).
        first = kept_query({"a": "auto_edit/manual", "b": "auto_edit/auto", "metric": "A"})
        assert first is not None
        KeptComparison.objects.filter(key=first.key).delete()
        KeptComparison.objects.create(
            key=first.key, query=first.query, viewed_at=timezone.now(), queued_at=timezone.now()
        )
        response_ok(client.get(_comparison_url().replace("metric=Vstrict", "metric=A")))

    return {
        "meta-evaluation, a comparison (a view after a change: stale)": comparison_after_a_change,
        "meta-evaluation, a comparison computed again (worker)": comparison_computed_again,
        "meta-evaluation, first view of a large comparison": comparison_asked_first,
    }


def _label_save(*, organizer: "User", assessor: "User", topic: "Topic") -> Step:
    """A ManualAssign save on the collection's nugget lists: the label and its answer's kept scores."""
    from django.test import Client
    from django.urls import reverse

    from assessor.models import AssessorWork
    from assignment.judging import answer_order, assign_work_give, work_nugget_set
    from assignment.models import AssignmentLabel

    work = AssessorWork.objects.filter(
        assessor=assessor, topic=topic, kind=assignment_kinds.ASSIGN_MANUAL
    ).first() or assign_work_give(topic=topic, assessor=assessor, by=organizer, assigner_name="bench-person")
    nugget = work_nugget_set(work=work).nuggets.order_by("position").values_list("pk", flat=True)[0]
    assessor_client = Client()
    assessor_client.force_login(assessor)
    # The label the first answer holds already (a second run): the save goes on from it.
    first_answer = answer_order(work=work)[0]
    stored = AssignmentLabel.objects.filter(work=work, answer_id=first_answer, nugget_id=nugget).first()
    state = {"label": stored.label if stored else ""}

    def label_save() -> None:
        label = "support" if state["label"] != "support" else "not_support"
        response = assessor_client.post(
            reverse("judge:label", args=[work.pk, 1]),
            {"nugget": nugget, "label": label, "previous": state["label"], "version": work.version},
            HTTP_ACCEPT="application/json",
        )
        assert response.status_code == 200, response.content[:300]
        state["label"] = label

    return label_save


def _refresh_steps(topic: "Topic") -> dict[str, Step]:
    """What a write that changes figures costs: one answer of a condition, one topic of every source (a submit)."""
    from assessor.models import Answer, AssessorWork, LabelSource
    from assessor.scoring.kept import scores_refresh, scores_refresh_work

    answer = Answer.objects.filter(topic=topic).order_by("pk").first()
    assert answer is not None
    # A submit (or reopening) refreshes what the work's labels go into, in its topic: a ManualAssign
    # work into the condition auto_edit/manual; a nugget list every condition over it.
    manual = LabelSource.objects.filter(family=assignment_kinds.LABEL_FAMILY, name="manual").first()
    assign_work = AssessorWork(
        topic=topic, kind=assignment_kinds.ASSIGN_MANUAL, nugget_set_name="auto_edit", source=manual
    )
    nugget_work = AssessorWork(topic=topic, kind=nugget_kinds.NUGGETS_AUTO_EDIT, nugget_set_name="auto_edit")
    return {
        "refresh: one answer, one condition": lambda: scores_refresh(
            family="conditions", columns=("auto_edit", "manual"), topics=[topic.pk], answers=[answer.pk]
        ),
        "refresh: one topic, every source": lambda: scores_refresh(topics=[topic.pk]),
        "refresh: a ManualAssign submit": lambda: scores_refresh_work(assign_work),
        "refresh: a nugget list submit": lambda: scores_refresh_work(nugget_work),
    }
