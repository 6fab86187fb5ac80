"""Progress on long runs: a live bar on a terminal, periodic plain lines in CI logs."""

from __future__ import annotations

import sys
import threading
import time
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


class RunProgress:
    """Counts attempts done, passed and failed, with an ETA."""

    def __init__(self, total: int, label: str, *, enabled: bool = True) -> None:
        self.total = total
        self.label = label
        self.done = self.passed = self.failed = self.errors = 0
        self.cost_usd = 0.0
        self._lock = threading.Lock()
        self._console = Console(stderr=True)
        self._live = enabled and self._console.is_terminal
        self._enabled = enabled
        self._started = time.monotonic()
        self._last_line = 0.0
        self._bar: Progress | None = None
        self._task_id: TaskID | None = None

    def __enter__(self) -> RunProgress:
        if self._live:
            self._bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=self._console,
            )
            self._bar.start()
            self._task_id = self._bar.add_task(self.label, total=self.total, counts="")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self._enabled and self.total:
            self._line()

    def _counts(self) -> str:
        cost = f"  ${self.cost_usd:.2f}" if self.cost_usd else ""
        return f"pass {self.passed}  fail {self.failed}  harness errors {self.errors}{cost}"

    def _line(self) -> None:
        elapsed = time.monotonic() - self._started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        print(
            f"rcb: {self.label}: {self.done}/{self.total} done ({self._counts()}), "
            f"{elapsed:.0f} s elapsed, ETA {eta:.0f} s",
            file=sys.stderr,
            flush=True,
        )

    def advance(self, status: str, *, cost_usd: float | None = None) -> None:
        """One attempt done with ``status``; ``cost_usd``: the dollars recorded so far."""
        with self._lock:
            self.done += 1
            if cost_usd is not None:
                self.cost_usd = cost_usd
            if status == "pass":
                self.passed += 1
            elif status == "fail":
                self.failed += 1
            elif status == "harness_error":
                self.errors += 1
            if self._bar is not None and self._task_id is not None:
                self._bar.update(self._task_id, advance=1, counts=self._counts())
            elif self._enabled and time.monotonic() - self._last_line >= 15:
                self._last_line = time.monotonic()
                self._line()
