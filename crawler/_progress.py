"""Crawl progress: a live bar on a terminal, a plain line per page in logs."""

from __future__ import annotations

import sys
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class CrawlProgress:
    """Entries read out of the total arXiv reports, with the candidates kept so far."""

    def __init__(self, *, enabled: bool = True) -> None:
        self._enabled = enabled
        self._console = Console(stderr=True)
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self.done = 0
        self.total: int | None = None
        self._last_line: int | None = None

    def __enter__(self) -> CrawlProgress:
        if self._enabled and self._console.is_terminal:
            self._bar = Progress(
                TextColumn("[bold]arXiv"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[kept]} with code"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self._console,
            )
            self._bar.start()
            self._task = self._bar.add_task("crawl", total=None, kept=0)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    def update(self, done: int, total: int | None, kept: int) -> None:
        """Called after each entry; ``done`` and ``total`` count from the crawl's start."""
        self.done, self.total = done, total
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total, kept=kept)

    def page(self, offset: int, total: int | None, kept: int) -> None:
        """Called at each saved checkpoint: one line when no live bar is shown."""
        if self._enabled and self._bar is None and offset != self._last_line:
            self._last_line = offset
            of = f" of {total}" if total is not None else ""
            print(f"rcb: crawl: {offset}{of} entries read, {kept} with code", file=sys.stderr)
