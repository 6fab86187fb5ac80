"""Any provider through litellm, with retries, an adaptive concurrency limit and cost accounting.

litellm is imported lazily: it costs seconds at import and is never needed for the
built-in models or for ``--help``.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rcb_action.errors import RcbError
from rcb_action.models._base import Completion, CompletionRequest, Model, ModelCallError
from rcb_action.models._limits import CallLimiter, retry_after_s
from rcb_action.models._registry import ModelInfo
from rcb_action.prompts import Prompt

_RETRIED = (
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "Timeout",
    "APIConnectionError",
)


def cache_tokens(usage: Any) -> tuple[int, int]:
    """(prompt tokens read from the provider's cache, tokens written to it) from a
    litellm usage: OpenAI's ``prompt_tokens_details.cached_tokens`` or Anthropic's
    ``cache_read_input_tokens``, and Anthropic's ``cache_creation_input_tokens``."""
    if usage is None:
        return 0, 0
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, dict):
        cached = details.get("cached_tokens")
    else:
        cached = getattr(details, "cached_tokens", None)
    cached = cached or getattr(usage, "cache_read_input_tokens", None) or 0
    written = getattr(usage, "cache_creation_input_tokens", None) or 0
    return int(cached), int(written)


@dataclass
class Prices:
    """Dollars per token; ``cache_read``/``cache_write`` None when not known."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None


def estimate_tokens(text: str) -> int:
    """Input tokens of ``text`` before the provider counts them: about four characters
    a token for English prose and code, the rule of thumb tokenizers agree on."""
    return len(text) // 4 + 1


def import_litellm() -> Any:
    """Import litellm with its price map taken from the installed package (no network)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


class LiteLLMModel(Model):
    """A model called through ``litellm.completion``.

    Args:
        name: the litellm model name (``provider/model``).
        info: its registry entry, when there is one.
        max_concurrency: calls in flight at once for this model (the registry's
            ``concurrency`` for it, when set, wins); it halves on a rate limit and
            grows back one by one (see :class:`~rcb_action.models._limits.CallLimiter`).
        max_attempts: attempts per request on retryable errors (rate limits,
            server errors, timeouts, connection errors).
        backoff_s: the first retry's delay; it doubles each attempt, with jitter.
        mock_responses: test double for the network: each call takes the next
            item as litellm's ``mock_response`` (a string such as
            ``"litellm.RateLimitError"`` raises that error through litellm's real path).
    """

    calls_provider = True

    def __init__(
        self,
        name: str,
        info: ModelInfo | None = None,
        *,
        max_concurrency: int = 16,
        max_attempts: int = 6,
        backoff_s: float = 2.0,
        timeout_s: float = 600.0,
        mock_responses: Sequence[str] | None = None,
    ) -> None:
        self.name = name
        self.info = info
        self.litellm_name = (info.litellm_name if info else None) or name
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        ceiling = info.concurrency if info and info.concurrency else max_concurrency
        self.limiter = CallLimiter(ceiling, info.tokens_per_minute if info else None)
        self._mocks = list(mock_responses) if mock_responses is not None else None
        self._mock_lock = threading.Lock()
        self.retries = 0
        self.context_window = info.context_window if info else None
        if self.context_window is None and info is None:
            self.context_window = self._litellm_context_window()

    def _litellm_context_window(self) -> int | None:
        try:
            model_info = import_litellm().get_model_info(self.litellm_name)
        except Exception:  # unknown to litellm's price map: no window known, no cut
            return None
        window = model_info.get("max_input_tokens") or model_info.get("max_tokens")
        return int(window) if window else None

    def check(self) -> None:
        if self._mocks is not None:
            return
        litellm = import_litellm()
        try:
            litellm.get_llm_provider(self.litellm_name)
        except Exception:
            raise RcbError(
                f"--model {self.name}: unknown model; use a litellm name such as "
                "openai/gpt-4o, or add it to the models registry"
            ) from None
        env = litellm.validate_environment(self.litellm_name)
        if not env.get("keys_in_environment", True):
            missing = ", ".join(env.get("missing_keys") or ["the provider's API key"])
            raise RcbError(f"--model {self.name}: set {missing} in the environment")

    def _next_mock(self) -> str | None:
        if self._mocks is None:
            return None
        with self._mock_lock:
            if not self._mocks:
                raise ModelCallError(f"{self.name}: no mock responses left")
            return self._mocks.pop(0)

    def _cost(self, litellm: Any, response: Any, tokens_in: int, tokens_out: int) -> float:
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        if cost is None and self.info and self.info.input_cost_per_mtok is not None:
            cost = (
                tokens_in * self.info.input_cost_per_mtok
                + tokens_out * (self.info.output_cost_per_mtok or 0)
            ) / 1e6
        if cost is None:
            try:
                cost = litellm.completion_cost(completion_response=response)
            except Exception:
                cost = 0.0
        return float(cost or 0.0)

    def prices(self) -> Prices | None:
        """The list prices: the registry's when it has them, with the cache prices from
        litellm's map; else litellm's map alone; None when neither knows the model."""
        try:
            known = import_litellm().get_model_info(self.litellm_name)
        except Exception:  # not in litellm's price map
            known = {}
        info = self.info
        if info is not None and info.input_cost_per_mtok is not None:
            prices = Prices(
                info.input_cost_per_mtok / 1e6, (info.output_cost_per_mtok or 0.0) / 1e6
            )
        elif known.get("input_cost_per_token") is not None:
            prices = Prices(
                float(known["input_cost_per_token"]),
                float(known.get("output_cost_per_token") or 0.0),
            )
        else:
            return None
        prices.cache_read = known.get("cache_read_input_token_cost")
        prices.cache_write = known.get("cache_creation_input_token_cost")
        return prices

    def marks_cache(self) -> bool:
        """Whether the provider caches a prompt prefix only where the request marks it
        (Anthropic's models, directly or through Bedrock and Vertex AI); OpenAI,
        Gemini and DeepSeek cache a repeated prefix on their own."""
        name = self.litellm_name.lower()
        return name.startswith("anthropic/") or "claude" in name

    def _content(self, prompt: Prompt) -> str | list[dict[str, Any]]:
        """The message content: the prompt's text, split at the end of the paper into two
        blocks with a cache breakpoint on the first when the provider needs it marked.
        The blocks join to exactly ``prompt.text`` (its sha is what is recorded)."""
        cut = prompt.prefix_chars
        if not self.marks_cache() or not 0 < cut < len(prompt.text):
            return prompt.text
        return [
            {"type": "text", "text": prompt.text[:cut], "cache_control": {"type": "ephemeral"}},
            {"type": "text", "text": prompt.text[cut:]},
        ]

    def _saved(self, litellm: Any, cached: int, written: int) -> float:
        """What the cache saved: cached tokens at the full input price less the cache-read
        price, less the surcharge for tokens written to the cache. 0 when the price map
        does not know the model's cache prices."""
        if not cached and not written:
            return 0.0
        try:
            info = litellm.get_model_info(self.litellm_name)
        except Exception:
            return 0.0
        full = info.get("input_cost_per_token") or 0.0
        read = info.get("cache_read_input_token_cost")
        write = info.get("cache_creation_input_token_cost")
        saved = cached * (full - read) if read is not None else 0.0
        if write is not None:
            saved -= written * max(write - full, 0.0)
        return float(saved)

    def call(
        self,
        messages: list[dict[str, Any]],
        *,
        tokens: int,
        options: Callable[[], dict[str, Any]],
    ) -> tuple[Any, Any, float]:
        """One completion through litellm, within this model's limiter, retried on
        rate limits (the limit halves, ``Retry-After`` is honoured), server errors,
        timeouts and connection errors.

        Args:
            messages: the conversation.
            tokens: the input tokens it is estimated to cost (for a tokens-per-minute budget).
            options: the extra ``litellm.completion`` arguments of each attempt (mocks, tools).

        Returns:
            ``(litellm, response, seconds the successful call took)``.

        Raises:
            RcbError: the provider rejected the API key.
            ModelCallError: any other failure, or still failing after ``max_attempts``.
        """
        litellm = import_litellm()
        retryable = tuple(getattr(litellm, n) for n in _RETRIED if hasattr(litellm, n))
        last_error: Exception | None = None
        for attempt in range(self.max_attempts):
            kwargs: dict[str, Any] = {"timeout": self.timeout_s, **options()}
            try:
                with self.limiter.slot(tokens):
                    started = time.monotonic()
                    response = litellm.completion(
                        model=self.litellm_name, messages=messages, **kwargs
                    )
                    latency = time.monotonic() - started
            except retryable as exc:
                last_error = exc
                self.retries += 1
                wait_s = None
                if isinstance(exc, litellm.RateLimitError):
                    wait_s = retry_after_s(exc)
                    self.limiter.rate_limited_for(wait_s)
                if wait_s is None:  # no Retry-After: exponential backoff with jitter
                    delay = self.backoff_s * (2**attempt) * (0.5 + random.random())
                    time.sleep(min(delay, 120.0))
                continue
            except litellm.AuthenticationError:
                raise RcbError(f"--model {self.name}: the provider rejected the API key") from None
            except Exception as exc:
                raise ModelCallError(f"{self.name}: {type(exc).__name__}: {exc}") from exc
            self.limiter.succeeded()
            return litellm, response, latency
        raise ModelCallError(
            f"{self.name}: gave up after {self.max_attempts} attempts: "
            f"{type(last_error).__name__}: {last_error}"
        )

    def complete(self, request: CompletionRequest) -> Completion:
        def options() -> dict[str, Any]:
            mock = self._next_mock()
            return {} if mock is None else {"mock_response": mock}

        messages = [{"role": "user", "content": self._content(request.prompt)}]
        litellm, response, latency = self.call(
            messages, tokens=estimate_tokens(request.prompt.text), options=options
        )
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        cached, written = cache_tokens(usage)
        text = response.choices[0].message.content or ""
        return Completion(
            text=text,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=self._cost(litellm, response, tokens_in, tokens_out),
            latency_s=latency,
            tokens_cached=cached,
            cost_saved_usd=self._saved(litellm, cached, written),
        )
