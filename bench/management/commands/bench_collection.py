"""Time the imports and the scoring of a collection at TREC 2024 RAG scale.

By default it works in a throw-away database of the configured kind (a file
in the benchmark folder for SQLite, `assessor_bench_<pid>` on PostgreSQL), made and
dropped like a test database, so that the real data is never touched.
"""

import io
import os
import statistics
import tempfile
from pathlib import Path

from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from bench.collection_data import Measure, benchmark_collection_build, measured
from bench.throwaway import throwaway_database

BENCH_DATABASE = "assessor_bench"


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
        parser.add_argument(
            "--in-place",
            action="store_true",
            help="import into the configured database itself (it must hold no topics) instead of a throw-away one",
        )

    def handle(self, *args, **options) -> None:
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
        for step in self._scoring_steps():
            self._say(step.line())
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
