"""Time the meta-evaluation at TREC 2024 RAG scale (146 runs, 301 topics, two conditions).

Builds the benchmark collection (bench.collection_data), imports the topics, the
runs and the two conditions' labels into a throw-away database of the
configured kind (like a test database: a file for SQLite, `metaeval_bench`
on PostgreSQL), then times, each several times:
- loading each condition's scores (the scoring's selector; once, for reference);
- the three taus for all seven nugget metrics, from the two conditions' scores;
- the whole table: the six run-level coefficients (tau-b, Spearman, Pearson,
  tau_ap_b, tau_GAP, tau over the top 10), the per-topic and all-pairs figures
  and 95% bootstrap intervals (`--bootstrap`, 1,000 resamples by default) for
  the seven metrics (target: under 5 s);
- the confusion matrix over every assignment label, and over every support label;
- `comparison_build`, all of the above as the page and the command run it (once).
"""

import io
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from django.core.management import call_command, get_commands
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, reset_queries

from assessor.scoring.scores import NUGGET_METRICS, Scores

if TYPE_CHECKING:
    from metaeval.comparison import Comparison
    from metaeval.stats import Confusion

BENCH_DATABASE = "metaeval_bench"
NUGGETS = "auto_edit"
CONDITIONS = ("manual", "auto")
SUPPORT_METHODS = ("scratch", "auto")


T = TypeVar("T")


def confusion_of(comparison: "Comparison") -> "Confusion":
    assert comparison.confusion is not None, "the sources share no labelled pair"
    return comparison.confusion


def confusion_note(confusion: "Confusion | None") -> str:
    assert confusion is not None, "the sources share no labelled pair"
    return (
        f"{confusion.total} pairs, agreement {confusion.agreement:.3f}, kappa {confusion.kappa:.3f}, "
        f"quadratic {confusion.kappa_quadratic:.3f}, alpha {confusion.alpha_ordinal:.3f}"
    )


class Command(BaseCommand):
    help = "Time Kendall's taus and confusion matrices between two conditions at TREC 2024 RAG scale."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--topics", type=int, default=301)
        parser.add_argument("--runs", type=int, default=146)
        parser.add_argument("--nuggets", type=int, default=20)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--repeat", type=int, default=3, help="time each step this many times (min and median)")
        parser.add_argument("--bootstrap", type=int, default=1000, help="resamples of the topics for the intervals")
        parser.add_argument(
            "--folder", type=Path, default=None, help="where to write the files (default: a temporary folder)"
        )
        parser.add_argument(
            "--in-place",
            action="store_true",
            help=f"use the configured database: time it as it is if it holds {NUGGETS}/manual and {NUGGETS}/auto, "
            "else build and import the collection into it first (it must hold no topics)",
        )
        parser.add_argument(
            "--kept",
            action="store_true",
            help="also time a kept comparison brought up to date after one topic's labels change (it changes some "
            "of the second condition's labels, --repeat topics), and the truth leaderboard page (bench/metaeval_kept.py)",
        )

    def handle(self, *args, **options) -> None:
        self.repeat = max(1, options["repeat"])
        self.bootstrap = max(0, options["bootstrap"])
        self.kept = options["kept"]
        self._say(f"database: {connection.vendor}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
        if options["in_place"] and self._loaded():
            self._bench()
            return
        try:
            from bench.collection_data import benchmark_collection_build
        except ImportError:
            raise CommandError("bench.collection_data is not available: use --in-place on a loaded database") from None
        if options["in_place"]:
            from assessor.models import Topic

            if Topic.objects.exists():
                raise CommandError(
                    f"the database holds topics but not the conditions {NUGGETS}/manual and {NUGGETS}/auto"
                )
        with tempfile.TemporaryDirectory(prefix="metaeval-bench-") as scratch:
            folder = options["folder"] or Path(scratch)
            started = time.perf_counter()
            paths = benchmark_collection_build(
                folder=folder,
                topics=options["topics"],
                runs=options["runs"],
                nuggets=options["nuggets"],
                seed=options["seed"],
            )
            self._say(f"{'build the files':<58} {time.perf_counter() - started:8.2f} s   in {folder}")
            if options["in_place"]:
                self._load(paths)
                self._bench()
            else:

                def load_and_bench() -> None:
                    self._load(paths)
                    self._bench()

                self._in_throwaway_database(folder, load_and_bench)

    def _loaded(self) -> bool:
        from assignment.selectors import condition_exists

        return all(condition_exists(nuggets=NUGGETS, assigner=assigner) for assigner in CONDITIONS)

    def _in_throwaway_database(self, folder: Path, work: Callable[[], object]) -> None:
        test_settings = connection.settings_dict.setdefault("TEST", {})
        test_settings["NAME"] = str(folder / "bench.sqlite3") if connection.vendor == "sqlite" else BENCH_DATABASE
        old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        try:
            work()
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)

    def _import(self, command: str, *arguments: str) -> None:
        if command not in get_commands():
            self._say(f"{command + ' ' + ' '.join(arguments[1:]):<58} skipped: command not available")
            return
        out = io.StringIO()
        started = time.perf_counter()
        call_command(command, *arguments, stdout=out, stderr=out)
        self._say(f"{command + ' ' + ' '.join(arguments[1:]):<58} {time.perf_counter() - started:8.2f} s")

    def _load(self, paths: dict) -> None:
        self._import("import_topics", str(paths["topics"]))
        started = time.perf_counter()
        # The runs' sentences and citations matter only to the support labels.
        if "import_run" in get_commands() and "import_support" in get_commands():
            for path in paths["runs"]:
                call_command("import_run", str(path), stdout=io.StringIO(), stderr=io.StringIO())
            step = f"import_run x{len(paths['runs'])}"
            self._say(f"{step:<58} {time.perf_counter() - started:8.2f} s")
        for condition in CONDITIONS:
            self._import(
                "import_assignments",
                str(paths[f"assignments_{condition}"]),
                "--nuggets",
                NUGGETS,
                "--assigner",
                condition,
            )
        for method in SUPPORT_METHODS:
            self._import("import_support", str(paths[f"support_{method}"]), "--method", method)

    def _time(
        self, step: str, work: Callable[[], T], note: Callable[[T], str] = lambda _: "", repeat: int | None = None
    ) -> T:
        seconds: list[float] = []
        repeat = repeat or self.repeat
        for _ in range(repeat):
            reset_queries()
            started = time.perf_counter()
            value = work()
            seconds.append(time.perf_counter() - started)
        # The machine's load says how far these times are from an idle machine's.
        load = os.getloadavg()[0]
        self._say(
            f"{step:<58} {min(seconds):8.3f} s min  {statistics.median(seconds):8.3f} s median  "
            f"(x{repeat}, load {load:.1f})  {note(value)}"
        )
        return value

    def _say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def _scores_load(self) -> tuple[Scores, Scores]:
        """The two conditions' scores; loading them is the scoring's work (assignment.selectors), timed once."""
        from assignment.selectors import nugget_scores

        try:
            scores_a = self._time(
                f"nugget_scores({NUGGETS}, {CONDITIONS[0]}) (load, once)",
                lambda: nugget_scores(nuggets=NUGGETS, assigner=CONDITIONS[0]),
                repeat=1,
            )
            scores_b = self._time(
                f"nugget_scores({NUGGETS}, {CONDITIONS[1]}) (load, once)",
                lambda: nugget_scores(nuggets=NUGGETS, assigner=CONDITIONS[1]),
                repeat=1,
            )
        except LookupError as exc:
            raise CommandError(f"the database lacks a condition: {exc}") from None
        return scores_a, scores_b

    def _support_confusion(self) -> None:
        """The support labels' matrix of the two methods, when the database holds both."""
        from metaeval.sources import source_parse, sources_confusion
        from support.selectors import support_methods_list

        methods = support_methods_list()
        if all(method in methods for method in SUPPORT_METHODS):
            sa, sb = source_parse(f"support:{SUPPORT_METHODS[0]}"), source_parse(f"support:{SUPPORT_METHODS[1]}")
            self._time(
                "confusion matrix, every support label",
                lambda: sources_confusion(sa, sb),
                confusion_note,
            )
        else:
            self._say(f"support methods {', '.join(SUPPORT_METHODS)} not in the database: support matrix skipped")

    def _bench(self) -> None:
        from metaeval.comparison import comparison_build
        from metaeval.sources import source_parse, sources_confusion
        from metaeval.stats import TauOptions, taus_compute_all

        a_text, b_text = f"{NUGGETS}/{CONDITIONS[0]}", f"{NUGGETS}/{CONDITIONS[1]}"
        # Fresh planner statistics and no dead rows, as autovacuum (PostgreSQL) or a periodic ANALYZE keeps them
        # after a bulk import: without them the planner guesses a table holds a row and picks nested loops.
        from bench.tidy import database_tidied

        self._say(database_tidied())
        scores_a, scores_b = self._scores_load()
        self._say(
            f"scale: {len(scores_a.runs)} runs, {len(scores_a.topics)} topics, "
            f"{len(scores_a.per_topic)} answers in {a_text}, {len(scores_b.per_topic)} in {b_text}"
        )
        self._time(
            "taus, 3 ways x 7 metrics",
            lambda: taus_compute_all(scores_a, scores_b, NUGGET_METRICS),
            lambda taus: (
                f"Vstrict run {taus[3].tau_run:.3f} topic-avg {taus[3].tau_topic_avg:.3f} all {taus[3].tau_all:.3f}"
            ),
        )
        table_options = TauOptions(bootstrap=self.bootstrap, seed=0)
        self._time(
            f"whole table: 7 metrics x 6 run-level coefficients, {self.bootstrap} bootstrap samples",
            lambda: taus_compute_all(scores_a, scores_b, NUGGET_METRICS, table_options),
            lambda taus: (
                f"Vstrict tau_ap {taus[3].tau_ap_run:.3f} tau_GAP {taus[3].tau_gap_run:.3f} "
                f"tau run 95% [{taus[3].ci95.get('tau_run', (float('nan'),) * 2)[0]:.3f}, "
                f"{taus[3].ci95.get('tau_run', (float('nan'),) * 2)[1]:.3f}]"
            ),
        )
        a, b = source_parse(a_text), source_parse(b_text)
        self._time(
            "confusion matrix, every assignment label",
            lambda: sources_confusion(a, b),
            confusion_note,
        )
        self._support_confusion()
        self._time(
            f"comparison_build({a_text}, {b_text}) (everything, once)",
            lambda: comparison_build(a_text, b_text, options=table_options),
            lambda c: f"{len(c.taus)} metrics, {confusion_of(c).total} label pairs",
            repeat=1,
        )
        if self.kept:
            from bench.metaeval_kept import kept_comparison_bench, truth_page_bench

            kept_options = {"a": a_text, "b": b_text, "nuggets": NUGGETS, "assigner_b": CONDITIONS[1]}
            kept_comparison_bench(**kept_options, bootstrap=self.bootstrap, repeat=self.repeat, say=self._say)
            truth_page_bench(judged=a_text, truth_of=b_text, repeat=self.repeat, say=self._say)
