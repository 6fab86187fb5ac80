"""The saved position of a crawl, so an interrupted or ``--max``-limited crawl continues.

A cursor belongs to one query (categories, start date, queue file). It fixes the
query's end time when the crawl starts, so resuming asks arXiv for the same
result set (sorted by submission date, oldest first: new papers only append),
and it holds the offset of the first entry not yet merged into the queue. It is
deleted when the crawl reaches the end of the results.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from crawler._queue import write_text_if_changed
from rcb_action.paths import cache_dir


class Cursor(BaseModel):
    """Where a crawl stands."""

    model_config = ConfigDict(extra="forbid")

    key: str
    query: str
    since: dt.date
    until: dt.datetime
    offset: int = 0
    total: int | None = None


def cursor_key(categories: tuple[str, ...], since: dt.date, queue_path: Path) -> str:
    """Identifies a query: the same categories, start date and queue file give the same key."""
    text = json.dumps(
        {
            "categories": sorted(categories),
            "since": since.isoformat(),
            "queue": str(Path(queue_path).resolve()),
        },
        sort_keys=True,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_cursor_path(key: str) -> Path:
    """``$RCB_CACHE_DIR/crawl/<key>.json`` (default ``~/.cache/rcb/crawl/``)."""
    return cache_dir("crawl") / f"{key}.json"


def load_cursor(path: Path, key: str) -> Cursor | None:
    """The saved cursor for ``key``; None when there is none (a damaged one is reported and ignored)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    try:
        cursor = Cursor.model_validate_json(text)
    except ValidationError:
        print(f"rcb: warning: {path}: unreadable crawl cursor; starting over", file=sys.stderr)
        return None
    return cursor if cursor.key == key else None


def save_cursor(path: Path, cursor: Cursor) -> None:
    write_text_if_changed(Path(path), cursor.model_dump_json(indent=2) + "\n")


def clear_cursor(path: Path) -> None:
    Path(path).unlink(missing_ok=True)
