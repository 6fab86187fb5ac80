"""A litellm custom provider that replays scripted agent turns, so tests drive agents
through litellm's real completion path (provider routing, response parsing, usage)
with no network: ``scripted/<name>`` answers with the next turn of ``<name>``'s script."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rcb_action.models._litellm import import_litellm

litellm = import_litellm()


class ScriptedProvider(litellm.CustomLLM):  # type: ignore[misc, name-defined]
    """Turns are ``{"content": str, "tool_calls": [{"name": ..., "arguments": {...}}]}``."""

    def __init__(self) -> None:
        super().__init__()
        self._scripts: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self.calls: dict[str, int] = {}

    def script(self, name: str, turns: list[dict[str, Any]]) -> str:
        """Load ``name``'s turns; returns the litellm model name that plays them."""
        with self._lock:
            self._scripts[name] = list(turns)
        return f"scripted/{name}"

    def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        name = model.split("/", 1)[-1]
        with self._lock:
            script = self._scripts.get(name)
            if not script:
                raise ValueError(f"scripted/{name}: no turns left")
            turn = script.pop(0)
            self.calls[name] = self.calls.get(name, 0) + 1
        calls = [
            {
                "id": f"call_{name}_{self.calls[name]}_{index}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
            }
            for index, c in enumerate(turn.get("tool_calls") or [])
        ]
        message: dict[str, Any] = {"role": "assistant", "content": turn.get("content") or ""}
        if calls:
            message["tool_calls"] = calls
        prompt_tokens = 1 + sum(len(str(m.get("content") or "")) for m in messages) // 4
        completion_tokens = 1 + len(json.dumps(turn)) // 4
        return litellm.ModelResponse(
            model=model,
            choices=[
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            usage={
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        )


@contextmanager
def registered(name: str, handler: Any) -> Iterator[Any]:
    """``handler`` (a litellm ``CustomLLM``) as litellm's provider ``name`` while inside."""
    saved = list(litellm.custom_provider_map)
    litellm.custom_provider_map = [*saved, {"provider": name, "custom_handler": handler}]
    try:
        yield handler
    finally:
        litellm.custom_provider_map = saved


@contextmanager
def scripted_provider() -> Iterator[ScriptedProvider]:
    """Register a :class:`ScriptedProvider` as litellm's ``scripted`` provider."""
    with registered("scripted", ScriptedProvider()) as provider:
        yield provider
