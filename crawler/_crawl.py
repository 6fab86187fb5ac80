"""``rcb crawl``: walk arXiv's listing for fresh papers with code and merge them into the queue.

Polite by construction: the ``arxiv`` package's client waits ``delay_seconds``
(3 s, as arXiv's terms ask) between requests and retries failed pages. Results
are sorted by submission date, oldest first, under a query whose end time is
fixed when the crawl starts, so a saved offset always points at the same entry:
after every page the queue is written and the cursor saved, and an interrupted
crawl continues where it stopped.
"""

from __future__ import annotations

import datetime as dt
import logging
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import arxiv
import requests
import requests.adapters

from crawler._candidates import Collector, merge, task_papers, with_score
from crawler._cursor import (
    Cursor,
    clear_cursor,
    cursor_key,
    default_cursor_path,
    load_cursor,
    save_cursor,
)
from crawler._progress import CrawlProgress
from crawler._queue import Candidate, Queue, load_queue, write_queue
from crawler._score import Cutoffs
from rcb_action.errors import RcbError

# Machine learning and at least three other sciences, each where methods ship with code.
DEFAULT_CATEGORIES: tuple[str, ...] = (
    "cs.LG",
    "stat.ML",
    "q-bio.*",
    "cond-mat.mtrl-sci",
    "q-fin.*",
    "physics.comp-ph",
    "physics.ao-ph",
    "physics.chem-ph",
    "astro-ph.IM",
    "math.NA",
)
POLITE_DELAY_S = 3.0  # arXiv's terms of use: no more than one request every three seconds
MAX_PAGE_SIZE = 2000  # the API's own limit


class _TimeoutAdapter(requests.adapters.HTTPAdapter):
    """Gives every request a timeout: the package sets none, and a stalled socket would
    otherwise hang a scheduled crawl until its job is killed."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__()
        self.timeout_s = timeout_s

    def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self.timeout_s
        return super().send(request, *args, **kwargs)


class _Client(arxiv.Client):
    """The package's client, with a request timeout, noting the result count arXiv
    reports (for the progress bar)."""

    total_results: int | None = None

    def __init__(self, *, timeout_s: float = 60.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        session = getattr(self, "_session", None)
        if isinstance(session, requests.Session):
            adapter = _TimeoutAdapter(timeout_s)
            session.mount("http://", adapter)
            session.mount("https://", adapter)

    def _parse_feed(self, url: str, first_page: bool = True, _try_index: int = 0) -> Any:
        feed = super()._parse_feed(url, first_page=first_page, _try_index=_try_index)
        if feed.results or first_page:
            self.total_results = feed.header.total_results
        return feed


def make_client(
    *,
    page_size: int = 100,
    delay_seconds: float = POLITE_DELAY_S,
    num_retries: int = 3,
    timeout_s: float = 60.0,
) -> _Client:
    """An arXiv client; below 3 s between requests only for a server other than arXiv's.

    Raises:
        RcbError: a delay under 3 s against arXiv, or a page size outside 1..2000.
    """
    host = urlsplit(arxiv.Client.query_url_format).hostname or ""
    if delay_seconds < POLITE_DELAY_S and host.endswith("arxiv.org"):
        raise RcbError(
            f"--delay: arXiv asks for at least {POLITE_DELAY_S:g} s between requests "
            f"(got {delay_seconds:g})"
        )
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise RcbError(f"--page-size: must be between 1 and {MAX_PAGE_SIZE} (got {page_size})")
    return _Client(
        page_size=page_size,
        delay_seconds=delay_seconds,
        num_retries=num_retries,
        timeout_s=timeout_s,
    )


def build_query(categories: tuple[str, ...], since: dt.date, until: dt.datetime) -> str:
    """The API's search query: any of the categories, submitted from ``since`` to ``until`` (UTC)."""
    cats = " OR ".join(f"cat:{c}" for c in categories)
    return f"({cats}) AND submittedDate:[{since:%Y%m%d}0000 TO {until:%Y%m%d%H%M}]"


@dataclass(frozen=True)
class CrawlOptions:
    """What to crawl and where to keep the results."""

    since: dt.date
    queue_path: Path
    categories: tuple[str, ...] = DEFAULT_CATEGORIES
    tasks_dir: Path | None = None
    max_entries: int | None = None
    cursor_path: Path | None = None
    restart: bool = False
    page_size: int = 100
    delay_seconds: float = POLITE_DELAY_S
    num_retries: int = 3
    timeout_s: float = 60.0  # per request
    until: dt.datetime | None = None  # the query's end; default: now
    progress: bool = True


@dataclass
class CrawlSummary:
    """What a crawl did."""

    query: str
    cursor_path: Path
    start_offset: int = 0
    offset: int = 0
    total: int | None = None
    complete: bool = False
    counts: Counter[str] = field(default_factory=Counter)
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    queue_written: bool = False
    queue: Queue | None = None
    warnings: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # wall
    cpu_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    @property
    def read(self) -> int:
        return self.offset - self.start_offset


class _ArxivWarnings(logging.Handler):
    """Turns the ``arxiv`` package's warnings (entries it skips) into crawl warnings."""

    def __init__(self, collector: Collector) -> None:
        super().__init__(logging.WARNING)
        self._collector = collector

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Skipping entry"):
            self._collector.counts["malformed"] += 1
        self._collector.warn(f"arXiv feed: {message}")


@contextmanager
def _capture_arxiv_warnings(collector: Collector) -> Iterator[None]:
    logger = logging.getLogger("arxiv")
    handler = _ArxivWarnings(collector)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def refresh(queue: Queue, tasks: dict[str, str], cutoffs: Cutoffs) -> None:
    """Rescore every entry and mark the ones that became tasks (or stopped being one)."""
    for arxiv_id, candidate in list(queue.candidates.items()):
        updated = with_score(candidate, cutoffs)
        task = tasks.get(arxiv_id)
        if task is not None and (updated.status != "task" or updated.task != task):
            updated = updated.model_copy(update={"status": "task", "task": task})
        elif task is None and updated.status == "task":
            updated = updated.model_copy(update={"status": "new", "task": None})
        queue.candidates[arxiv_id] = updated


@contextmanager
def _timed(summary: CrawlSummary, stage: str) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        yield
    finally:
        summary.seconds[stage] += time.perf_counter() - wall
        summary.cpu_seconds[stage] += time.process_time() - cpu


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)


def crawl(
    options: CrawlOptions,
    cutoffs: Cutoffs,
    *,
    client: arxiv.Client | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> CrawlSummary:
    """Crawl arXiv and merge what has code into the queue file; see the module docstring.

    Raises:
        RcbError: arXiv kept failing (HTTP errors, empty pages, no connection) after
            the client's retries; everything read before is saved and the same call
            continues from there.
        KeyboardInterrupt: after saving the queue and the cursor.
    """
    key = cursor_key(options.categories, options.since, options.queue_path)
    cursor_path = options.cursor_path or default_cursor_path(key)
    saved = None if options.restart else load_cursor(cursor_path, key)
    until = saved.until if saved else (options.until or _now())
    query = build_query(options.categories, options.since, until)
    summary = CrawlSummary(query=query, cursor_path=cursor_path)
    summary.start_offset = summary.offset = saved.offset if saved else 0
    summary.total = saved.total if saved else None

    queue = load_queue(options.queue_path)
    summary.queue = queue
    before = dict(queue.candidates)
    tasks = task_papers(options.tasks_dir)
    # Cutoffs and tasks do not change during a crawl, and new candidates are scored
    # as they come: the entries already queued are brought up to date once, here.
    refresh(queue, tasks, cutoffs)
    collector = Collector(
        since=options.since,
        categories=options.categories,
        cutoffs=cutoffs,
        tasks=tasks,
        counts=summary.counts,
        warnings=summary.warnings,
        on_warning=on_warning,
    )
    client = client or make_client(
        page_size=options.page_size,
        delay_seconds=options.delay_seconds,
        num_retries=options.num_retries,
        timeout_s=options.timeout_s,
    )
    page_size = int(client.page_size)
    stop_at = None if options.max_entries is None else summary.start_offset + options.max_entries
    search = arxiv.Search(
        query=query,
        max_results=stop_at,
        sort_by=arxiv.SortCriterion.SubmittedDate,
        sort_order=arxiv.SortOrder.Ascending,
    )

    def checkpoint() -> None:
        # The queue first, then the cursor: a crash between them re-reads a page, harmlessly.
        with _timed(summary, "write"):
            for arxiv_id, fresh in collector.take().items():
                queue.candidates[arxiv_id] = merge(queue.candidates.get(arxiv_id), fresh)
            summary.queue_written |= write_queue(queue)
            save_cursor(
                cursor_path,
                Cursor(
                    key=key,
                    query=query,
                    since=options.since,
                    until=until,
                    offset=summary.offset,
                    total=summary.total,
                ),
            )
        progress.page(summary.offset, summary.total, summary.counts["kept"])

    with _capture_arxiv_warnings(collector), CrawlProgress(enabled=options.progress) as progress:
        try:
            exhausted = False
            while not exhausted and (stop_at is None or summary.offset < stop_at):
                results = client.results(search, offset=summary.offset)
                while True:
                    try:
                        with _timed(summary, "fetch_parse"):
                            result = next(results)
                    except StopIteration:
                        reached_max = stop_at is not None and summary.offset >= stop_at
                        exhausted = not reached_max or (
                            summary.total is not None and summary.offset >= summary.total
                        )
                        break
                    except ValueError as exc:
                        # A page the package cannot parse (say, a garbled date) fails whole;
                        # skip it rather than stop every later crawl on it.
                        collector.counts["unparsed_page"] += 1
                        collector.warn(
                            f"arXiv page at entry {summary.offset} could not be parsed ({exc}); "
                            f"skipped its {page_size} entries"
                        )
                        summary.offset += page_size
                        if summary.total is not None:
                            summary.offset = min(summary.offset, summary.total)
                        checkpoint()
                        break
                    with _timed(summary, "candidates"):
                        collector.add(result)
                        summary.offset += 1
                        summary.total = getattr(client, "total_results", None) or summary.total
                    progress.update(
                        summary.offset - summary.start_offset,
                        None
                        if summary.total is None
                        else min(summary.total, stop_at or summary.total) - summary.start_offset,
                        summary.counts["kept"],
                    )
                    if (summary.offset - summary.start_offset) % page_size == 0:
                        checkpoint()
            checkpoint()
        except (arxiv.HTTPError, arxiv.UnexpectedEmptyPageError, requests.RequestException) as exc:
            checkpoint()
            # The package's messages end with the whole request URL: keep the line readable.
            what = exc.message if isinstance(exc, arxiv.ArxivError) else str(exc)
            raise RcbError(
                f"arXiv API: {what} (after {client.num_retries} retries); {summary.read} entries "
                f"read and saved; run the same command again to continue from entry "
                f"{summary.offset} (cursor {cursor_path})"
            ) from None
        except KeyboardInterrupt:
            checkpoint()
            print(
                f"rcb: crawl interrupted at entry {summary.offset}; everything read is saved: "
                f"run the same command again to continue (cursor {cursor_path})",
                file=sys.stderr,
            )
            raise
    summary.complete = exhausted
    if exhausted:
        clear_cursor(cursor_path)
    summary.added = sorted(set(queue.candidates) - set(before))
    summary.updated = sorted(
        arxiv_id
        for arxiv_id, old in before.items()
        if _changed(old, queue.candidates.get(arxiv_id))
    )
    return summary


def _changed(old: Candidate, new: Candidate | None) -> bool:
    if new is None:
        return False
    return (old.version, old.title, old.code_links) != (new.version, new.title, new.code_links)


def print_warning(message: str) -> None:
    print(f"rcb: warning: {message}", file=sys.stderr)
