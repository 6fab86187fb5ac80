"""arXiv's e-print endpoint, asked politely: one request at a time, a pause between
requests, a User-Agent that says who asks, and retries with backoff.

arXiv's terms for automated access ask for no more than one request every three
seconds on a single connection, and for clients that identify themselves. Every
request in this process goes through one lock and waits for the pause since the
previous one; the pause is 3 s against arxiv.org and none against another host
(a local fake in tests, a mirror). ``RCB_ARXIV_URL`` overrides the base address.
"""

from __future__ import annotations

import errno
import os
import random
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from urllib.parse import urlparse

from rcb_action import __version__
from rcb_action.papers._latex import MAX_EPRINT_BYTES

ARXIV_URL = "https://arxiv.org"
POLITE_DELAY_S = 3.0
# Tries per e-print, and the first retry's wait (it doubles each try).
ATTEMPTS = 4
BACKOFF_S = 5.0
# Statuses worth asking again: arXiv's rate limiting and passing server trouble.
_RETRIED_STATUS = {408, 425, 429, 500, 502, 503, 504}

# One request at a time in this process, whatever the client object.
_LOCK = threading.Lock()
_last_request = 0.0


class FetchError(OSError):
    """The e-print could not be downloaded (after retries, or a final answer such as 404)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def base_url() -> str:
    """``$RCB_ARXIV_URL`` or arXiv itself, without a trailing slash."""
    return (os.environ.get("RCB_ARXIV_URL") or ARXIV_URL).rstrip("/")


def user_agent() -> str:
    """Who is asking: rcb, its version and where it lives (the Action's repository on
    GitHub's runners)."""
    server = os.environ.get("GITHUB_SERVER_URL", "https://github.com")
    repo = os.environ.get("GITHUB_ACTION_REPOSITORY") or os.environ.get("GITHUB_REPOSITORY")
    home = f"{server}/{repo}" if repo else "https://github.com/OWNER/rcb"
    return (
        f"rcb/{__version__} (research-code benchmark: fetches the pinned LaTeX source of "
        f"benchmark papers, one request at a time; +{home})"
    )


@dataclass
class EprintClient:
    """Downloads e-prints.

    Args:
        url: the base address (default :func:`base_url`).
        delay_s: the least time between two requests of this process (default 3 s
            against arxiv.org, 0 elsewhere; never under 3 s against arxiv.org).
        attempts: tries per e-print on timeouts, connection errors, 429 and 5xx.
        backoff_s: the first retry's wait; it doubles each try, with jitter, and a
            ``Retry-After`` answer is honoured up to ``max_wait_s``.
        timeout_s: per request.
    """

    url: str = field(default_factory=base_url)
    delay_s: float | None = None
    attempts: int = field(default_factory=lambda: ATTEMPTS)
    backoff_s: float = field(default_factory=lambda: BACKOFF_S)
    timeout_s: float = 60.0
    max_wait_s: float = 120.0
    sleep: Callable[[float], None] = time.sleep
    requests: int = 0

    def __post_init__(self) -> None:
        self.url = self.url.rstrip("/")
        host = urlparse(self.url).hostname or ""
        polite = host == "arxiv.org" or host.endswith(".arxiv.org")
        if self.delay_s is None:
            self.delay_s = POLITE_DELAY_S if polite else 0.0
        elif polite:
            self.delay_s = max(self.delay_s, POLITE_DELAY_S)

    def eprint_url(self, arxiv_id: str, version: int) -> str:
        return f"{self.url}/e-print/{arxiv_id}v{version}"

    def _once(self, url: str) -> bytes:
        global _last_request
        with _LOCK:
            wait = _last_request + float(self.delay_s or 0.0) - time.monotonic()
            if wait > 0:
                self.sleep(wait)
            reached = True
            try:
                self.requests += 1
                request = urllib.request.Request(url, headers={"User-Agent": user_agent()})
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    data: bytes = response.read(MAX_EPRINT_BYTES + 1)
            except urllib.error.URLError as exc:
                # A request that never left this machine costs the server nothing.
                reached = isinstance(exc, urllib.error.HTTPError) or not unreachable(exc.reason)
                raise
            finally:
                if reached:
                    _last_request = time.monotonic()
        if len(data) > MAX_EPRINT_BYTES:
            raise FetchError(f"{url}: more than {MAX_EPRINT_BYTES // 2**20} MB")
        return data

    def fetch(self, arxiv_id: str, version: int) -> bytes:
        """The e-print of ``<arxiv_id>v<version>``, as arXiv sends it.

        Raises:
            FetchError: a final answer (404: no such version; other 4xx), or
                nothing after ``attempts`` tries.
        """
        url = self.eprint_url(arxiv_id, version)
        last = ""
        for attempt in range(max(1, self.attempts)):
            retry_after: float | None = None
            try:
                return self._once(url)
            except urllib.error.HTTPError as exc:
                if exc.code not in _RETRIED_STATUS:
                    what = "no such paper or version" if exc.code == 404 else exc.reason
                    raise FetchError(f"{url}: HTTP {exc.code} ({what})", status=exc.code) from None
                last = f"HTTP {exc.code}"
                retry_after = _retry_after(exc.headers.get("Retry-After"))
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                last = (
                    f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
                )
                if unreachable(reason):
                    # No network here (no name resolution, no route): one quick second try
                    # covers a passing hiccup; waiting longer would not bring a network.
                    if attempt >= 1:
                        break
                    self.sleep(min(self.backoff_s, 1.0))
                    continue
            if attempt + 1 < self.attempts:
                wait = self.backoff_s * (2**attempt) * (0.5 + random.random())
                if retry_after is not None:
                    wait = max(wait, retry_after)
                self.sleep(min(wait, self.max_wait_s))
        raise FetchError(f"{url}: no answer after {attempt + 1} tries ({last})")


def unreachable(reason: object) -> bool:
    """The error says this machine has no way to the server: no name resolution, no
    route, or the connection refused."""
    if isinstance(reason, socket.gaierror):
        return True
    return isinstance(reason, OSError) and reason.errno in {
        errno.ENETUNREACH,
        errno.EHOSTUNREACH,
        errno.ECONNREFUSED,
    }


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None
