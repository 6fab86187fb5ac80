"""How many calls a model has in flight: a limit that backs off on rate limits.

One :class:`CallLimiter` per model. A call takes a slot with :meth:`CallLimiter.slot`
and reports how it ended. On a rate limit (HTTP 429) the limit halves and, when the
provider said how long to wait (``Retry-After``), no new call starts before then; each
run of successes as long as the current limit raises it by one again (additive
increase, multiplicative decrease, as TCP does), up to the configured ceiling. A
tokens-per-minute budget from the models registry, when there is one, is kept with a
sliding one-minute window over the tokens each call declared.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from email.utils import parsedate_to_datetime
from typing import Any

MAX_PAUSE_S = 300.0


class CallLimiter:
    """Calls in flight at once, adapting to the provider's rate limits.

    Args:
        ceiling: the most calls in flight (``--concurrency`` or the registry's).
        tokens_per_minute: the provider's input-token budget per minute, if known.
        clock: seconds, monotonic (tests pass a fake).
    """

    def __init__(
        self,
        ceiling: int,
        tokens_per_minute: int | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ceiling = max(1, ceiling)
        self.limit = self.ceiling
        self.tokens_per_minute = tokens_per_minute
        self.in_flight = 0
        self.rate_limited = 0
        self._clock = clock
        self._successes = 0
        self._paused_until = 0.0
        self._spent: deque[tuple[float, int]] = deque()
        self._cond = threading.Condition()

    def _tokens_last_minute(self, now: float) -> int:
        while self._spent and self._spent[0][0] <= now - 60.0:
            self._spent.popleft()
        return sum(tokens for _, tokens in self._spent)

    def wait_s(self, tokens: int = 0) -> float:
        """0 when a call of ``tokens`` input tokens may start now, else how long to wait
        at most before looking again."""
        with self._cond:
            return self._wait_locked(tokens)

    def _wait_locked(self, tokens: int) -> float:
        now = self._clock()
        if now < self._paused_until:
            return self._paused_until - now
        if self.in_flight >= self.limit:
            return 1.0
        if self.tokens_per_minute:
            used = self._tokens_last_minute(now)
            # A call larger than the whole budget still runs, alone in its minute.
            if used and used + tokens > self.tokens_per_minute:
                return max(self._spent[0][0] + 60.0 - now, 0.01)
        return 0.0

    @contextmanager
    def slot(self, tokens: int = 0) -> Iterator[None]:
        """Hold one call's slot; waits for the limit, a pause and the token budget."""
        with self._cond:
            while (delay := self._wait_locked(tokens)) > 0:
                self._cond.wait(timeout=delay)
            self.in_flight += 1
            if self.tokens_per_minute:
                self._spent.append((self._clock(), tokens))
        try:
            yield
        finally:
            with self._cond:
                self.in_flight -= 1
                self._cond.notify_all()

    def succeeded(self) -> None:
        """One call answered: after as many successes as the limit, the limit grows by one."""
        with self._cond:
            self._successes += 1
            if self.limit < self.ceiling and self._successes >= self.limit:
                self.limit += 1
                self._successes = 0
                self._cond.notify_all()

    def rate_limited_for(self, retry_after_s: float | None) -> None:
        """The provider answered 429: halve the limit and pause new calls for
        ``retry_after_s`` when the provider gave it (capped at five minutes)."""
        with self._cond:
            self.rate_limited += 1
            self.limit = max(1, self.limit // 2)
            self._successes = 0
            if retry_after_s and retry_after_s > 0:
                until = self._clock() + min(retry_after_s, MAX_PAUSE_S)
                self._paused_until = max(self._paused_until, until)


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds a rate-limit error asks to wait: its ``retry-after-ms`` or ``retry-after``
    header (seconds or an HTTP date), from the headers litellm attached or the HTTP
    response's; None when it gives none."""
    sources: list[Any] = [getattr(exc, "headers", None)]
    response = getattr(exc, "response", None)
    sources.append(getattr(response, "headers", None))
    for headers in sources:
        if not headers:
            continue
        try:
            lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
        except (TypeError, ValueError):
            continue
        if "retry-after-ms" in lowered:
            try:
                return float(lowered["retry-after-ms"]) / 1000.0
            except ValueError:
                pass
        value = lowered.get("retry-after")
        if value is None:
            continue
        try:
            return float(value)
        except ValueError:
            pass
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            continue
        return max(when.timestamp() - time.time(), 0.0)
    return None
