"""Agents through litellm's tool calling, with the snippet models' retries and accounting."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rcb_action.agent._base import (
    AgentModel,
    AgentSession,
    AgentTurn,
    Message,
    ToolCall,
    turn_from_dict,
)
from rcb_action.models import LiteLLMModel, ModelCallError, ModelInfo, estimate_tokens
from rcb_action.tasks import Task

MockTurn = dict[str, Any] | str


class LiteLLMAgent(LiteLLMModel, AgentModel):
    """A model that acts through litellm's tool calling.

    Args:
        name: the litellm model name (``provider/model``).
        info: its registry entry, when there is one.
        mock_turns: test double for the network, through litellm's real code path:
            each call takes the next item, either a scripted turn
            ``{"content": str, "tool_calls": [{"name": str, "arguments": {...}}]}``
            (litellm's ``mock_response`` and ``mock_tool_calls``) or a string given as
            ``mock_response`` (``"litellm.RateLimitError"`` raises that error).
        **options: as for :class:`~rcb_action.models.LiteLLMModel`.
    """

    def __init__(
        self,
        name: str,
        info: ModelInfo | None = None,
        *,
        mock_turns: Sequence[MockTurn] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(name, info, **options)
        self._turn_mocks = list(mock_turns) if mock_turns is not None else None

    def check(self) -> None:
        if self._turn_mocks is None:
            super().check()

    def start(self, task: Task, sample: int) -> AgentSession:
        return _Session(self)

    def _mock_kwargs(self) -> dict[str, Any]:
        if self._turn_mocks is None:
            return {}
        with self._mock_lock:
            if not self._turn_mocks:
                raise ModelCallError(f"{self.name}: no mock turns left")
            mock = self._turn_mocks.pop(0)
        if isinstance(mock, str):
            return {"mock_response": mock}
        turn = turn_from_dict(mock, 0)
        kwargs: dict[str, Any] = {"mock_response": turn.text}
        if turn.tool_calls:
            kwargs["mock_tool_calls"] = [call.message() for call in turn.tool_calls]
        return kwargs

    def chat(self, messages: list[Message], tools: list[dict[str, Any]]) -> AgentTurn:
        """One call: the conversation so far in, the model's turn out.

        Raises:
            ModelCallError: the provider failed after retries.
            RcbError: the provider rejected the API key.
        """
        tokens = estimate_tokens("".join(str(m.get("content") or "") for m in messages))
        litellm, response, latency = self.call(
            messages,
            tokens=tokens,
            options=lambda: {"tools": tools, **self._mock_kwargs()},
        )
        return self._turn(litellm, response, latency)

    def _turn(self, litellm: Any, response: Any, latency: float) -> AgentTurn:
        message = response.choices[0].message
        calls = []
        for index, call in enumerate(getattr(message, "tool_calls", None) or []):
            function = call.function
            calls.append(
                ToolCall(
                    id=call.id or f"call_{index}",
                    name=function.name or "",
                    arguments=function.arguments or "{}",
                )
            )
        usage = getattr(response, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        return AgentTurn(
            text=message.content or "",
            tool_calls=calls,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=self._cost(litellm, response, tokens_in, tokens_out),
            latency_s=latency,
        )


class _Session(AgentSession):
    def __init__(self, model: LiteLLMAgent) -> None:
        self.model = model

    def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> AgentTurn:
        return self.model.chat(messages, tools)
