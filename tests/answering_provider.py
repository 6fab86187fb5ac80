"""A litellm custom provider that answers each prompt it is given with the answer it
was given for it, after a set latency, optionally after a rate limit first, and counts
what it serves: the network double for the throughput, cost and rate-limit tests and
for ``bench/bench_throughput.py``. Its usage figures come from litellm's own token
counter (OpenAI's tokenizer), as a provider's would from its tokenizer."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from scripted_provider import registered

from rcb_action.models import fenced, import_litellm
from rcb_action.prompts import build_prompt
from rcb_action.tasks import Task

litellm = import_litellm()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class AnsweringProvider(litellm.CustomLLM):  # type: ignore[misc, name-defined]
    """``answering/<anything>`` answers a prompt from :meth:`answer`'s table.

    Args:
        latency_s: seconds each answered call takes.
        retry_after_s: the ``Retry-After`` a rate-limited call carries (None: no header).
    """

    def __init__(self, latency_s: float = 0.0, retry_after_s: float | None = 0.05) -> None:
        super().__init__()
        self.latency_s = latency_s
        self.retry_after_s = retry_after_s
        self._answers: dict[str, str] = {}
        self._limit_first: set[str] = set()
        self._lock = threading.Lock()
        self.calls = 0
        self.rate_limited = 0
        self.in_flight = 0
        self.max_in_flight = 0

    def answer(self, prompt_text: str, completion: str, *, rate_limit_first: bool = False) -> None:
        with self._lock:
            self._answers[_sha(prompt_text)] = completion
            if rate_limit_first:
                self._limit_first.add(_sha(prompt_text))

    def answer_with_references(
        self, tasks: Iterable[Task], *, rate_limit_every: int = 0, paper: str = "without"
    ) -> int:
        """Answer every snippet's prompt of ``tasks`` with the true snippet; every
        ``rate_limit_every``-th prompt (0: none) meets a rate limit first. Returns the
        number of prompts."""
        count = 0
        for task in tasks:
            for snippet in task.snippet_names():
                prompt = build_prompt(task, snippet, paper=paper)  # type: ignore[arg-type]
                limited = bool(rate_limit_every) and count % rate_limit_every == 0
                self.answer(
                    prompt.text,
                    fenced("".join(task.reference_body(snippet))),
                    rate_limit_first=limited,
                )
                count += 1
        return count

    def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        text = "".join(str(m.get("content") or "") for m in messages)
        key = _sha(text)
        with self._lock:
            self.calls += 1
            if key in self._limit_first:
                self._limit_first.discard(key)
                self.rate_limited += 1
                headers = (
                    {"retry-after": str(self.retry_after_s)}
                    if self.retry_after_s is not None
                    else None
                )
                raise litellm.RateLimitError(
                    message="rate limited (scripted)",
                    llm_provider="answering",
                    model=model,
                    headers=headers,
                )
            answer = self._answers.get(key, "I was not given this prompt.")
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.latency_s)
        finally:
            with self._lock:
                self.in_flight -= 1
        prompt_tokens = litellm.token_counter(model="gpt-4o", text=text)
        completion_tokens = litellm.token_counter(model="gpt-4o", text=answer)
        return litellm.ModelResponse(
            model=model,
            choices=[
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": answer},
                    "finish_reason": "stop",
                }
            ],
            usage={
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        )


@contextmanager
def answering_provider(**options: Any) -> Iterator[AnsweringProvider]:
    """Register an :class:`AnsweringProvider` as litellm's ``answering`` provider."""
    with registered("answering", AnsweringProvider(**options)) as provider:
        yield provider
