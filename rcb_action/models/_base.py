"""The model interface every backend implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from rcb_action.prompts import Prompt
from rcb_action.tasks import Task
from rcb_action.text import utf8_safe


class ModelCallError(RuntimeError):
    """The provider could not answer (after retries): infrastructure, not the model's fault."""


@dataclass(frozen=True)
class CompletionRequest:
    """What a model is asked: the prompt for one snippet, one sample."""

    task: Task
    snippet: str
    sample: int
    prompt: Prompt


@dataclass(frozen=True)
class Completion:
    """A model's raw answer and what it cost.

    Every answer enters rcb here, whatever the backend, so ``text`` is made valid
    here: lone surrogates (a provider's, or a replay file's ``"\\ud800"``) become
    U+FFFD (:func:`rcb_action.text.utf8_safe`), and the answer can be written to
    results, logs and sandboxes like any other text.
    """

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    # Prompt tokens the provider served from its prompt cache, and what that saved
    # against the full input price (net of any cache-write surcharge).
    tokens_cached: int = 0
    cost_saved_usd: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", utf8_safe(self.text))


class Model(ABC):
    """A source of completions.

    Attributes:
        name: the name results are recorded under.
        context_window: the model's context window in tokens, when known.
        calls_provider: whether answering costs a network call.
        reads_prompt: whether the answer depends on the prompt. A model that does
            not read it (``reference``, ``null``, ``replay:``) is never given the
            paper, so it runs without the network and its resume key does not
            depend on the paper's text.
    """

    name: str
    context_window: int | None = None
    calls_provider: bool = False
    reads_prompt: bool = True

    def check(self) -> None:
        """Raise :class:`~rcb_action.errors.RcbError` if the model cannot be used (e.g. a missing key)."""
        return None

    def check_prompt(self, task_id: str, snippet: str, sample: int, prompt: Prompt) -> None:
        """Raise :class:`~rcb_action.errors.RcbError` if this model's answer for the
        attempt was made for another prompt (a replay line's ``prompt_sha``)."""
        return None

    @abstractmethod
    def complete(self, request: CompletionRequest) -> Completion:
        """Answer one request.

        Raises:
            ModelCallError: the provider failed after retries.
        """
