"""Time the report family's pages at the demo's size, to the first byte, quiet and on a loaded machine.

    manage.py bench_report_pages [--repeat 7] [--load 0] [--in-place] [--profile PAGE]

Loads the demo (`load_demo`) into a throw-away database of the configured kind (a file in a temporary folder on
SQLite, `report_pages_bench_<pid>` on PostgreSQL: set DATABASE_URL), or with `--in-place` into the configured
database itself (a scratch one: the demo adds nothing a second time, the jobs are skipped when their names are
taken). It then runs the README tour's LLM jobs in this process against the fake LLM server (bench/fake_llm.py):
preferences `llm-prefs`, the PrefNugget bank `prefnugget`, grades `llm-grades` and ARGUE-style `llm-argue` on
bank `gold`, and a second source of grades and of ARGUE (`llm-grades-flip`, `llm-argue-flip`) from a flipped
server (`--flip`: every label turned round), so that the comparisons have something to compare. After a
VACUUM and ANALYZE (bench.tidy: no dead rows and fresh planner statistics, as autovacuum keeps them) it times each page an organizer or assessor
opens, through the test client (the pages are not streamed: the first byte goes when the page is rendered):
the topic page of a kiddie request, the Borda, grade and ARGUE-style leaderboards, the meta-evaluation
comparison of the two grade sources and of the two ARGUE sources (first view: its kept comparison deleted
before each request; then the kept one), the truth page of a grade source against `scores:kiddie-truth`, the
ARGUE report page, the preference, grading and ARGUE judging pages of the demo's work, and the bank workspace.
Each page is requested `--repeat` times after one warming request: the median and p95 in ms, and the queries
of one request. `--load N` first starts N processes that keep a CPU busy each (stopped at the end), as a
machine shared with test suites is. The target is under 500 ms a page on the loaded machine.

The numbers measured before and after the comparisons were made fast are in docs/metaeval.md, "How fast the
report family's pages are"; `--profile PAGE` prints where one request of a page spends its time (cProfile,
PROFILE_LINES functions, 40 by default).
"""

import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlencode

from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import reverse

from assessor.campaigns.middleware import campaign_urls
from assessor.models import Campaign
from assessor.models.keys import topic_key
from assessor.project.celery import app as celery_app
from bench.fake_llm import FakeLLMServer
from bench.processes import load_average
from bench.throwaway import throwaway_database
from bench.tidy import database_tidied

TARGET_MS = 500.0
KIDDIE = "rag4reports-kiddie"  # the demo's campaign of the report family
TOPIC = "bee"  # a kiddie request
GRADES, GRADES_FLIP = "grades:llm-grades", "grades:llm-grades-flip"
ARGUE, ARGUE_FLIP = "argue:llm-argue", "argue:llm-argue-flip"
TRUTH = "scores:kiddie-truth"
TRUTH_METRIC = "cover4=RELEVANCE"


class Timing(NamedTuple):
    median_ms: float
    p95_ms: float
    queries: int


class Page(NamedTuple):
    """A page to time: who opens it, its path, and what to undo before each request (a kept comparison)."""

    name: str
    user: str
    path: str
    before: Callable[[], None] = lambda: None


# --- the data -------------------------------------------------------------------------------------------------


def _job(command: str, *arguments: str) -> None:
    """One of the README tour's jobs, run in this process (`--sync`); skipped when its name is taken."""
    out = io.StringIO()
    try:
        call_command(command, *arguments, "--sync", "--campaign", KIDDIE, stdout=out, stderr=out)
    except CommandError as exc:
        if "already" not in str(exc) and "exists" not in str(exc):
            raise
        out.write(f"skipped: {exc}")


@contextmanager
def fake_llm(*, flip: bool) -> Iterator[None]:
    """The project's settings pointed at a fake LLM server (the flipped one: a second model that disagrees)."""
    server = FakeLLMServer(flip=flip).start()
    try:
        with override_settings(LLM_BASE_URL=server.url, LLM_MODEL="fake-llm", LLM_API_KEY="", LLM_API_VERSION=""):
            yield
    finally:
        server.stop()


def report_sources_build(say: Callable[[str], None]) -> None:
    """The demo and the tour's LLM sources, with a second grade and ARGUE-style source from a flipped model."""
    steps: list[tuple[bool, str, tuple[str, ...]]] = [
        (False, "run_preferences", ("--name", "llm-prefs")),
        (False, "run_prefnugget", ("--preferences", "llm-prefs", "--name", "prefnugget")),
        (False, "run_grades", ("--bank", "gold", "--name", "llm-grades")),
        (False, "run_argue", ("--bank", "gold", "--name", "llm-argue")),
        (True, "run_grades", ("--bank", "gold", "--name", "llm-grades-flip")),
        (True, "run_argue", ("--bank", "gold", "--name", "llm-argue-flip")),
    ]
    started = time.perf_counter()
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    say(f"{'load_demo':<44}{time.perf_counter() - started:8.2f} s")
    for flip, command, arguments in steps:
        started = time.perf_counter()
        with fake_llm(flip=flip):
            _job(command, *arguments)
        say(f"{command + ' ' + ' '.join(arguments):<44}{time.perf_counter() - started:8.2f} s")
    say(database_tidied())


# --- the pages ------------------------------------------------------------------------------------------------


def _comparison_forget() -> None:
    """No kept comparison: the page is computed as on its first view."""
    from metaeval.models import KeptComparison

    KeptComparison.objects.all().delete()


def _work_path(username: str, kind_word: str) -> str:
    from assessor.models import AssessorWork
    from assessor.work.queue import work_url

    works = AssessorWork.objects.filter(assessor__username=username).order_by("pk")
    for work in works:
        if kind_word in work.kind:
            url = work_url(work)
            if url:
                return url
    raise CommandError(f"{username} has no {kind_word} work with a page")


def pages_list() -> list[Page]:
    """The organizer's pages, in the kiddie campaign (their URLs name it), then the assessors' work pages."""
    with campaign_urls(Campaign.objects.get(slug=KIDDIE)):
        organizer_pages = _organizer_pages()
    return [
        *organizer_pages,
        Page("preference judging", "assessor1", _work_path("assessor1", "preference")),
        Page("grading", "assessor2", _work_path("assessor2", "grade")),
        Page("ARGUE-style judging", "assessor2", _work_path("assessor2", "argue")),
        Page("bank workspace", "assessor1", _work_path("assessor1", "bank")),
    ]


def _organizer_pages() -> list[Page]:
    def compare(a: str, b: str) -> str:
        return f"{reverse('metaeval:index')}?{urlencode({'a': a, 'b': b})}"

    truth = {"a": GRADES, "truth": TRUTH, "metric": TRUTH_METRIC, "on_missing": "zero"}
    report = {"source": ARGUE.split(":")[1], "vs": ARGUE_FLIP.split(":")[1]}
    return [
        Page("topic page (bee)", "organizer", reverse("collection:topic", args=[topic_key(TOPIC)])),
        Page("Borda leaderboard", "organizer", reverse("collection:borda_leaderboard")),
        Page("grade leaderboard", "organizer", reverse("collection:grade_leaderboard")),
        Page("ARGUE-style leaderboard", "organizer", reverse("collection:argue_leaderboard")),
        Page("compare grades, first view", "organizer", compare(GRADES, GRADES_FLIP), _comparison_forget),
        Page("compare grades, kept", "organizer", compare(GRADES, GRADES_FLIP)),
        Page("compare ARGUE, first view", "organizer", compare(ARGUE, ARGUE_FLIP), _comparison_forget),
        Page("compare ARGUE, kept", "organizer", compare(ARGUE, ARGUE_FLIP)),
        Page("truth: grades vs kiddie-truth", "organizer", f"{reverse('metaeval:truth')}?{urlencode(truth)}"),
        Page("ARGUE report page", "organizer", f"{reverse('argue:report')}?{urlencode(report)}"),
    ]


def _landing(client: Client, path: str) -> str:
    """The page a work's link lands on (a judging page's first item, after its redirect)."""
    for _ in range(5):
        response = client.get(path)
        if response.status_code not in (301, 302):
            if response.status_code != 200:
                raise CommandError(f"{path}: HTTP {response.status_code}")
            return path
        path = response["Location"]
    raise CommandError(f"{path}: too many redirects")


def page_time(client: Client, page: Page, *, repeat: int) -> Timing:
    path = _landing(client, page.path)  # also warms the templates and the session
    page.before()
    with CaptureQueriesContext(connection) as queries:
        client.get(path)
    count = len(queries)
    times = []
    for _ in range(repeat):
        page.before()
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise CommandError(f"{page.name}: HTTP {response.status_code}")
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return Timing(statistics.median(times), p95, count)


def pages_time(repeat: int, *, profile: str = "") -> dict[str, Timing]:
    clients: dict[str, Client] = {}
    results = {}
    for page in pages_list():
        if page.user not in clients:
            clients[page.user] = Client()
            clients[page.user].force_login(User.objects.get(username=page.user))
        if profile and profile.lower() in page.name.lower():
            _profile(clients[page.user], page)
        results[page.name] = page_time(clients[page.user], page, repeat=repeat)
    return results


def _profile(client: Client, page: Page) -> None:
    """One request of the page under cProfile, the slowest functions printed (cumulative time)."""
    import cProfile
    import pstats

    path = _landing(client, page.path)
    page.before()
    profiler = cProfile.Profile()
    profiler.enable()
    client.get(path)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(int(os.environ.get("PROFILE_LINES", "40")))
    print(f"--- profile of {page.name}\n{out.getvalue()}", file=sys.stderr)


# --- the load -------------------------------------------------------------------------------------------------

BUSY = "import time\nend = time.monotonic() + 3600\nwhile time.monotonic() < end:\n    pass\n"


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """`count` processes that each keep a CPU busy (an hour at most), stopped on the way out."""
    processes = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(count)]
    try:
        if processes:
            time.sleep(1.0)  # the scheduler shares the CPUs before the first request
        yield
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=10)


class Command(BaseCommand):
    help = "Time the report family's pages (topic, leaderboards, comparisons, judging) at the demo's size."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--repeat", type=int, default=7, help="timed requests per page (after one warming)")
        parser.add_argument("--load", type=int, default=0, help="busy processes running while the pages are timed")
        parser.add_argument("--in-place", action="store_true", help="use the configured (scratch) database as it is")
        parser.add_argument("--profile", default="", help="profile one request of the pages whose name holds this")

    def handle(self, *args, **options) -> None:
        self._say(f"database: {connection.vendor}; {os.cpu_count()} CPUs, load average {load_average()}")
        if options["in_place"]:
            self._bench(options)
            return
        with tempfile.TemporaryDirectory(prefix="report-pages-bench-") as scratch:
            with throwaway_database(Path(scratch), prefix="report_pages_bench"):
                self._bench(options)

    def _bench(self, options: dict) -> None:
        # Everything runs in this process: a task the data's refreshes send (the comparisons' warm-up) runs at
        # once rather than waiting in the configured broker for a worker of another database.
        eager = celery_app.conf.task_always_eager
        celery_app.conf.task_always_eager = True
        try:
            report_sources_build(self._say)
        finally:
            celery_app.conf.task_always_eager = eager
        repeat = max(1, options["repeat"])
        with busy_processes(max(0, options["load"])):
            results = pages_time(repeat, profile=options["profile"])
            load = load_average()
        self._table(results, load=load, busy=options["load"])

    def _table(self, results: dict[str, Timing], *, load: str, busy: int) -> None:
        width = max(len(name) for name in results) + 2
        self._say(f"{busy} busy processes, load average {load}; target < {TARGET_MS:.0f} ms")
        self._say(f"{'page':<{width}}{'median ms':>10}{'p95 ms':>9}{'queries':>9}")
        for name, timing in results.items():
            flag = "" if timing.median_ms < TARGET_MS else "  over target"
            self._say(f"{name:<{width}}{timing.median_ms:>10.1f}{timing.p95_ms:>9.1f}{timing.queries:>9}{flag}")

    def _say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()
