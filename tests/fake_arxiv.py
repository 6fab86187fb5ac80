"""A fake of the arXiv API's ``/api/query`` on 127.0.0.1, serving recorded Atom pages.

The recorded pages' entries are replayed in order; each request gets the slice
``start .. start + max_results`` wrapped in the API's feed envelope with its
``opensearch:`` totals, as arXiv answers any offset (the ``arxiv`` package asks
for offsets that are not page boundaries when it skips a malformed entry).
Scripted answers (a 503, an empty page) can be queued for a given ``start``.
Point the ``arxiv`` package at it with::

    monkeypatch.setattr(arxiv.Client, "query_url_format", fake.query_url_format)
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse
from xml.sax.saxutils import escape

FIXTURES = Path(__file__).parent / "fixtures" / "arxiv"
_ENTRY = re.compile(r"<entry>.*?</entry>", re.DOTALL)
_TOTAL = re.compile(r"<opensearch:totalResults>(\d+)</opensearch:totalResults>")

_ENVELOPE = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <id>https://arxiv.org/api/fake{start}</id>
  <title>arXiv Query: {title}</title>
  <updated>2025-11-01T12:00:00Z</updated>
  <link href="https://arxiv.org/api/query?{query}" type="application/atom+xml"/>
  <opensearch:itemsPerPage>{per_page}</opensearch:itemsPerPage>
  <opensearch:totalResults>{total}</opensearch:totalResults>
  <opensearch:startIndex>{start}</opensearch:startIndex>
{entries}
</feed>
"""


@dataclass
class Request:
    start: int
    max_results: int
    search_query: str
    sort_by: str
    sort_order: str
    status: int


def entries_of(pages: Iterable[Path | str | bytes]) -> tuple[list[str], int]:
    """The ``<entry>`` elements of recorded pages, in order, and the first page's total."""
    entries: list[str] = []
    total: int | None = None
    for page in pages:
        text = page.decode() if isinstance(page, bytes) else Path(page).read_text(encoding="utf-8")
        entries += _ENTRY.findall(text)
        found = _TOTAL.search(text)
        if total is None and found:
            total = int(found[1])
    return entries, len(entries) if total is None else total


class FakeArxiv:
    """The fake server; ``query_url_format`` is what ``arxiv.Client`` formats requests with."""

    def __init__(
        self, pages: Iterable[Path | str | bytes] = (), *, entries: list[str] | None = None
    ):
        if entries is None:
            entries, total = entries_of(pages)
            assert total == len(entries), f"recorded total {total} != {len(entries)} entries"
        self.entries = entries
        self.requests: list[Request] = []
        self._script: list[tuple[int, int, int | float | bytes]] = []  # (start, times left, answer)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.query_url_format = self.url + "/api/query?{}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeArxiv:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def fail(self, start: int, *, status: int = 503, times: int = 1) -> None:
        """Answer the next ``times`` requests for ``start`` with an HTTP error."""
        self._script.append((start, times, status))

    def answer(self, start: int, body: bytes, *, times: int = 1) -> None:
        """Answer the next ``times`` requests for ``start`` with ``body`` (say, an empty page)."""
        self._script.append((start, times, body))

    def stall(self, start: int, seconds: float, *, times: int = 1) -> None:
        """Hold the next ``times`` answers for ``start`` back by ``seconds`` (a slow network)."""
        self._script.append((start, times, seconds))

    def page(self, start: int, max_results: int, search_query: str = "") -> bytes:
        chosen = self.entries[start : start + max_results]
        return _ENVELOPE.format(
            start=start,
            title=escape(
                f"search_query={search_query}&id_list=&start={start}&max_results={max_results}"
            ),
            query=escape(f"start={start}&max_results={max_results}"),
            per_page=max_results,
            total=len(self.entries),
            entries="\n".join("  " + e for e in chosen),
        ).encode()

    def _scripted(self, start: int) -> int | float | bytes | None:
        with self._lock:
            for i, (when, left, answer) in enumerate(self._script):
                if when == start and left > 0:
                    self._script[i] = (when, left - 1, answer)
                    return answer
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def do_GET(self) -> None:
                parsed = urlparse(self.path)
                query = {k: v[0] for k, v in parse_qs(parsed.query).items()}
                start = int(query.get("start", "0"))
                max_results = int(query.get("max_results", "10"))
                answer = fake._scripted(start) if parsed.path == "/api/query" else 404
                if isinstance(answer, float):
                    time.sleep(answer)
                    answer = None
                if answer is None:
                    status, body = 200, fake.page(start, max_results, query.get("search_query", ""))
                elif isinstance(answer, bytes):
                    status, body = 200, answer
                else:
                    status, body = answer, b"Service Unavailable"
                with fake._lock:
                    fake.requests.append(
                        Request(
                            start,
                            max_results,
                            query.get("search_query", ""),
                            query.get("sortBy", ""),
                            query.get("sortOrder", ""),
                            status,
                        )
                    )
                ctype = "application/atom+xml; charset=utf-8" if status == 200 else "text/plain"
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

        return Handler


def recorded(scenario: str) -> list[Path]:
    """The recorded pages of a scenario folder under tests/fixtures/arxiv, in order."""
    return sorted((FIXTURES / scenario).glob("page-*.xml"))
