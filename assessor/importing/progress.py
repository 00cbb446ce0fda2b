"""How far a running import has got, for whoever watches it (the upload page's progress bar).

The watcher sets an `ImportProgress` around the import (`progress_watched`);
`read_lines` counts the lines it reads and the import's writes count the rows
they write (staged rows, on SQLite, until the switch). Every `every` lines the
watcher's `report` is called, outside the import's transaction: it is the
watcher's to store the numbers where another process can read them. An import
nobody watches pays one check per line.
"""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

REPORT_EVERY_LINES = 1000


@dataclass
class ImportProgress:
    report: Callable[["ImportProgress"], None]
    every: int = REPORT_EVERY_LINES
    lines: int = 0  # lines read, blank ones included
    rows: int = 0  # rows written (created, updated or deleted)
    bytes: int = 0  # how far into the file the reading is, within the reader's buffer
    position: Callable[[], int] = lambda: 0  # the reader's offset in the file, asked only when reporting
    counting: bool = True  # False once the file is prepared: the import's own bookkeeping is not the file's rows

    def reading(self, position: Callable[[], int]) -> None:
        self.position = position

    def line_read(self, number: int) -> None:
        self.lines = number
        if number % self.every == 0:
            self.bytes = self.position()
            self.report(self)

    def rows_written(self, count: int) -> None:
        if self.counting:
            self.rows += count

    def prepared(self) -> None:
        """The file is read and its rows written (staged, on SQLite); what remains is the commit or the switch."""
        self.counting = False
        self.report(self)

    def restart(self) -> None:
        """The file is read again from its start (an import that prepares again after a switch conflict)."""
        self.lines = self.rows = self.bytes = 0
        self.counting = True


_watched: ContextVar[ImportProgress | None] = ContextVar("import_progress", default=None)


@contextmanager
def progress_watched(progress: ImportProgress) -> Iterator[ImportProgress]:
    """Imports run inside this block report to `progress`."""
    token = _watched.set(progress)
    try:
        yield progress
    finally:
        _watched.reset(token)


def progress_current() -> ImportProgress | None:
    return _watched.get()
