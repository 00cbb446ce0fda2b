"""Shared plumbing of the import and export commands."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO, cast

from django.core.management.base import BaseCommand, CommandError

from assessor.campaigns.commands import CampaignCommand
from assessor.collection.score_formats import LAYOUTS, ScoreFile, ScoreFileRefused, rows_policy, score_table_lines
from assessor.importing.base import ImportFailure, ImportResult, statistics_refresh
from assessor.names import NameRefused, name_checked
from assessor.scoring.lifecycle import open_work_included
from assessor.scoring.scores import Scores


class ImportCommand(CampaignCommand):
    """An import of one file: `run_import` does the work; failures become a clear CommandError."""

    campaign_writes = True

    # The options naming what the import writes into (a source, a table): under the rule of names
    # (assessor.names), checked before the file is read. None (not given) lets a name default.
    name_options: tuple[str, ...] = ()

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
            for option in self.name_options:
                if options[option] is not None:
                    name_checked(options[option], option="--" + option.replace("_", "-"))
        except NameRefused as refusal:
            raise CommandError(f"{refusal}\nNothing was imported.") from None
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


class ExportCommand(CampaignCommand):
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
    """The options of a score table export: its layout, the run ids' form, zero rows, the run of a one-run layout."""
    parser.add_argument(
        "--format", choices=tuple(LAYOUTS), default="tsv",
        help="; ".join(f"{name}: {columns}" for name, columns in LAYOUTS.items()) + " (default tsv)",
    )  # fmt: skip
    parser.add_argument(
        "--zero-rows", action="store_true",
        help="write a 0 row for each evaluated topic a run did not answer (its mean counts it 0 either way)",
    )  # fmt: skip
    parser.add_argument("--run", default="", help="the run of a one-run layout (trec_eval)")
    add_team_prefix_argument(parser)


class ScoresExportCommand(ExportCommand):
    """An export of a score table in the layout asked; says on standard error what its rows hold."""

    def scores(self, options: dict) -> Scores:
        raise NotImplementedError

    def add_export_arguments(self, parser) -> None:
        self.add_source_arguments(parser)
        add_score_layout_arguments(parser)

    def add_source_arguments(self, parser) -> None:
        pass

    def lines(self, options: dict) -> Iterator[str]:
        scores = self.scores(options)
        file = ScoreFile(
            layout=options["format"], team_prefix=options["team_prefix"], zero_rows=options["zero_rows"],
            run=options["run"],
        )  # fmt: skip
        try:
            lines = score_table_lines(scores, file)
        except ScoreFileRefused as exc:
            raise CommandError(str(exc)) from None
        self.stderr.write(f"rows: {rows_policy(scores, file)}")
        return lines


def add_team_prefix_argument(parser) -> None:
    parser.add_argument(
        "--team-prefix", action="store_true",
        help="write run ids with their team prefix (citi.BEST_cot_gpt3.5) where a file named them so",
    )  # fmt: skip
