"""Shared plumbing of the import and export commands."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO, cast

from django.core.management.base import BaseCommand, CommandError

from assessor.importing.base import ImportFailure, ImportResult, statistics_refresh
from assessor.scoring.lifecycle import open_work_included


class ImportCommand(BaseCommand):
    """An import of one file: `run_import` does the work; failures become a clear CommandError."""

    def add_arguments(self, parser) -> None:
        parser.add_argument("path", type=Path)
        parser.add_argument("--replace", action="store_true", help="overwrite stored rows the file contradicts")
        self.add_import_arguments(parser)

    def add_import_arguments(self, parser) -> None:
        pass

    def run_import(self, path: Path, options: dict) -> ImportResult:
        raise NotImplementedError

    def handle(self, *args, **options) -> None:
        try:
            result = self.run_import(options["path"], options)
        except ImportFailure as failure:
            raise CommandError(f"{failure}\nNothing was imported.") from None
        statistics_refresh(result)
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
        self.stdout.write(result.summary())


@contextmanager
def output_stream(path: Path | None, stdout: TextIO | None = None) -> Iterator[TextIO]:
    """Standard output, or a file written whole or not at all."""
    if path is None:
        yield stdout or sys.stdout
        return
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as handle:
            yield handle
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(path)


class ExportCommand(BaseCommand):
    """An export streamed to standard output or `--output PATH`."""

    def add_arguments(self, parser) -> None:
        parser.add_argument("--output", type=Path, default=None, help="write here instead of standard output")
        add_include_open_argument(parser)
        self.add_export_arguments(parser)

    def add_export_arguments(self, parser) -> None:
        pass

    def lines(self, options: dict) -> Iterator[str]:
        raise NotImplementedError

    def notes(self, options: dict) -> list[str]:
        """What keeps the exported labels or scores from being final (open work, stale labels)."""
        return []

    def handle(self, *args, **options) -> None:
        with open_work_included(options["include_open"]):
            notes_write(self, self.notes(options))
            try:
                with output_stream(options["output"], cast(TextIO, self.stdout._out)) as out:
                    for line in self.lines(options):
                        out.write(line)
            except LookupError as exc:
                raise CommandError(str(exc.args[0] if exc.args else exc)) from None


def notes_write(command: BaseCommand, notes: list[str]) -> None:
    """What keeps printed or exported scores from being final, as warnings on standard error."""
    for note in notes:
        command.stderr.write(f"warning: {note}")


def add_include_open_argument(parser) -> None:
    parser.add_argument(
        "--include-open",
        action="store_true",
        help="count open work too (unsubmitted or reopened, and jobs still running): provisional figures",
    )


def add_score_layout_arguments(parser) -> None:
    """The options of a score table export: its layout and the run ids' form."""
    parser.add_argument(
        "--format", choices=("tsv", "trec_eval"), default="tsv",
        help="tsv: run_id topic_id metric value, with a header (default); "
        "trec_eval: run measure topic value, no header, as trec_eval -q and ir_measures users read",
    )  # fmt: skip
    add_team_prefix_argument(parser)


def add_team_prefix_argument(parser) -> None:
    parser.add_argument(
        "--team-prefix", action="store_true",
        help="write run ids with their team prefix (citi.BEST_cot_gpt3.5) where a file named them so",
    )  # fmt: skip
