"""What an agent is: a model that answers a conversation with text and tool calls."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from rcb_action.tasks import Task

Message = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model made it.

    Attributes:
        id: the call's id, echoed in the tool's answer.
        name: the tool's name.
        arguments: the raw JSON arguments, as the model wrote them.
    """

    id: str
    name: str
    arguments: str

    def parsed(self) -> dict[str, Any]:
        """The arguments as a mapping.

        Raises:
            ValueError: they are not a JSON object.
        """
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"the arguments are not valid JSON ({exc.msg})") from None
        if not isinstance(value, dict):
            raise ValueError("the arguments must be a JSON object")
        return value

    def message(self) -> dict[str, Any]:
        """The call as it appears in the assistant message of the conversation."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True)
class AgentTurn:
    """One answer of the model: text, tool calls, and what it cost."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def message(self) -> Message:
        """The assistant message that goes back into the conversation."""
        message: Message = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [call.message() for call in self.tool_calls]
        return message


class AgentSession(ABC):
    """One conversation: the model sees every message so far and answers."""

    @abstractmethod
    def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> AgentTurn:
        """The model's next turn.

        Raises:
            ModelCallError: the provider failed after retries (not the model's fault).
            RcbError: a problem the user must fix (a rejected key).
        """


class AgentModel(ABC):
    """A source of agent sessions.

    Attributes:
        name: the name results are recorded under.
        calls_provider: whether answering costs a network call.
    """

    name: str
    calls_provider: bool = False

    def check(self) -> None:
        """Raise :class:`~rcb_action.errors.RcbError` if the model cannot be used."""
        return None

    @abstractmethod
    def start(self, task: Task, sample: int) -> AgentSession:
        """A new conversation for one attempt at ``task``."""


class ScriptedSession(AgentSession):
    """Plays fixed turns whatever the conversation says; then stops calling tools."""

    def __init__(self, turns: list[AgentTurn]) -> None:
        self._turns = list(turns)

    def respond(self, messages: list[Message], tools: list[dict[str, Any]]) -> AgentTurn:
        return self._turns.pop(0) if self._turns else AgentTurn(text="(script finished)")


def turn_from_dict(data: dict[str, Any], number: int) -> AgentTurn:
    """A scripted turn from ``{"content": str, "tool_calls": [{"name", "arguments"}]}``.

    ``arguments`` may be a mapping (encoded here) or a JSON string (kept as written).

    Raises:
        ValueError: malformed.
    """
    content = data.get("content") or ""
    if not isinstance(content, str):
        raise ValueError("'content' must be a string")
    calls = []
    for index, call in enumerate(data.get("tool_calls") or []):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError("each tool call needs a 'name'")
        arguments = call.get("arguments", {})
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
        calls.append(ToolCall(id=f"call_{number}_{index}", name=call["name"], arguments=raw))
    return AgentTurn(text=content, tool_calls=calls)


def turn_to_dict(turn: AgentTurn) -> dict[str, Any]:
    """A turn in the form :func:`turn_from_dict` reads (and replay files hold)."""
    return {
        "content": turn.text,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in turn.tool_calls],
    }
