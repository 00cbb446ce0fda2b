"""How long a large run import holds SQLite's write lock: staged (the default) and in one transaction.

Builds a synthetic collection (bench.collection_data), puts all its runs in one
file (301 topics x 80 runs = 24,080 answers by default), and imports it into a
throw-away SQLite file twice: with IMPORT_STAGING on, then off (the whole import
in one transaction, as before). For each it prints the import's time, the
longest time the write lock was held in a row (what one label save would have
waited), the total time held, and the staging file's size. The lock is watched
from a connection of its own (bench.lock_watch).
"""

import os
import tempfile
import time
from pathlib import Path
from typing import cast

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from assessor.importing import staging
from bench.collection_data import benchmark_collection_build, peak_rss_mib
from bench.lock_watch import WriteLockWatch
from bench.tidy import database_tidied


class Command(BaseCommand):
    help = "Time a large run import on SQLite and how long it holds the write lock, staged and in one transaction."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--topics", type=int, default=301)
        parser.add_argument("--runs", type=int, default=80, help="runs in the one file (each answers every topic)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--folder", type=Path, default=None, help="where to write the files (default: a temporary folder)")

    def handle(self, *args, **options) -> None:
        if connection.vendor != "sqlite":
            raise CommandError("the write lock is SQLite's: run with a SQLite DATABASE_URL")
        with tempfile.TemporaryDirectory(prefix="assessor-bench-") as scratch:
            folder = options["folder"] or Path(scratch)
            paths = benchmark_collection_build(folder=folder, topics=options["topics"], runs=options["runs"], nuggets=20, seed=options["seed"])
            run_file = folder / "all_runs.jsonl"
            with run_file.open("w", encoding="utf-8") as out:
                for path in cast(list[Path], paths["runs"]):
                    out.write(path.read_text(encoding="utf-8"))
            size = run_file.stat().st_size / 2**20
            load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
            self._say(f"run file: {options['topics'] * options['runs']:,} answers, {size:.0f} MiB; load average {load} on {os.cpu_count()} CPUs")
            for staged in (True, False):
                self._in_throwaway_database(folder, lambda staged=staged: self._bench(paths, run_file, staged=staged))

    def _in_throwaway_database(self, folder: Path, work) -> None:
        test_settings = connection.settings_dict.setdefault("TEST", {})
        test_settings["NAME"] = str(folder / f"assessor_bench_lock_{os.getpid()}.sqlite3")
        old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
        try:
            work()
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)

    def _bench(self, paths: dict, run_file: Path, *, staged: bool) -> None:
        quiet = open(os.devnull, "w")
        call_command("import_topics", str(paths["topics"]), stdout=quiet)
        call_command("import_segments", str(paths["segments"]), stdout=quiet)
        self._say(database_tidied())
        staging_sizes: list[int] = []
        close = staging.Writes.close

        def close_measured(writes) -> None:
            staging_sizes.append(writes.path.stat().st_size if writes.path.exists() else 0)
            close(writes)

        previous = settings.IMPORT_STAGING
        settings.IMPORT_STAGING = staged
        staging.Writes.close = close_measured  # type: ignore[method-assign,assignment]
        try:
            begin = time.monotonic()
            with WriteLockWatch(str(settings.DATABASES["default"]["NAME"])) as watch:
                call_command("import_run", str(run_file), stdout=quiet)
            seconds = time.monotonic() - begin
        finally:
            settings.IMPORT_STAGING = previous
            staging.Writes.close = close  # type: ignore[method-assign]
        how = "staged, then switched" if staged else "in one transaction"
        staged_size = f", staging file {max(staging_sizes) / 2**20:.0f} MiB" if staged and staging_sizes else ""
        self._say(
            f"import_run ({how}): {seconds:.1f} s; write lock held {watch.longest_hold:.1f} s in a row at most "
            f"({watch.longest_hold / seconds:.0%} of the import), {watch.held_seconds:.1f} s in all "
            f"(the statistics refresh after it included){staged_size}; peak RSS {peak_rss_mib():.0f} MiB"
        )

    def _say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()
