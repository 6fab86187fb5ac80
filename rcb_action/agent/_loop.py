"""The tool-calling loop: the model acts, the tools answer, every step is logged.

The loop runs one stage at a time: the harness adds the stage's instructions, the
model works with the tools until it calls ``submit``, stops calling tools, or the
attempt's budget (turns, tokens, wall time, cost) runs out.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rcb_action.agent._base import AgentSession, AgentTurn, Message, ToolCall
from rcb_action.agent._tools import TOOLS, ToolResult, Workbench

NUDGE = (
    "Use the tools to do the work, and call submit when this stage is done "
    "(a second answer without a tool call ends the stage)."
)
# A tool call refused by the stage's rules returns this reason instead of running.
Guard = Callable[[ToolCall], str | None]


@dataclass(frozen=True)
class Budget:
    """What one attempt may spend."""

    turns: int
    tokens: int
    wall_time_s: float
    cost_usd: float


@dataclass
class Usage:
    """What an attempt has spent so far."""

    turns: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    started: float = field(default_factory=time.monotonic)

    def add(self, turn: AgentTurn) -> None:
        self.turns += 1
        self.tokens_in += turn.tokens_in
        self.tokens_out += turn.tokens_out
        self.cost_usd += turn.cost_usd

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def exhausted(self, budget: Budget) -> str | None:
        """The first limit reached (``turns``, ``tokens``, ``wall_time``, ``cost``), or None."""
        if self.turns >= budget.turns:
            return "turns"
        if self.tokens_in + self.tokens_out >= budget.tokens:
            return "tokens"
        if self.elapsed() >= budget.wall_time_s:
            return "wall_time"
        if self.cost_usd >= budget.cost_usd:
            return "cost"
        return None

    def summary(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "cost_usd": round(self.cost_usd, 6),
            "wall_s": round(self.elapsed(), 3),
        }


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class StepLog:
    """An attempt's step log: one JSON object a line, each with a UTC timestamp and
    the seconds since the attempt began. Written and flushed line by line, so an
    interrupted attempt keeps every step it took."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._handle = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._started = time.monotonic()
        self._lock = threading.Lock()

    def write(self, event: str, **fields: Any) -> None:
        entry = {
            "time": utc_now(),
            "elapsed_s": round(time.monotonic() - self._started, 3),
            "event": event,
            **fields,
        }
        with self._lock:
            self._handle.write(json.dumps(entry, default=str, ensure_ascii=False) + "\n")
            self._handle.flush()

    def close(self) -> None:
        with self._lock:
            self._handle.close()


@dataclass(frozen=True)
class StageEnd:
    """Why the model's work on a stage ended."""

    reason: Literal["submitted", "stopped", "budget"]
    note: str = ""
    limit: str | None = None


class AgentLoop:
    """One attempt's conversation, carried across its stages.

    Args:
        session: the model's conversation.
        workbench: the tools, bound to the sandbox.
        budget: the attempt's limits.
        log: the step log.
        system: the system message.
    """

    def __init__(
        self,
        session: AgentSession,
        workbench: Workbench,
        budget: Budget,
        log: StepLog,
        system: str,
    ) -> None:
        self.session = session
        self.workbench = workbench
        self.budget = budget
        self.log = log
        self.usage = Usage()
        self.messages: list[Message] = [{"role": "system", "content": system}]

    def time_left(self) -> float:
        return max(0.0, self.budget.wall_time_s - self.usage.elapsed())

    def run_stage(self, stage: str, instructions: str, guard: Guard | None = None) -> StageEnd:
        """Let the model work on ``stage`` until it submits, stops or runs out of budget.

        Raises:
            ModelCallError: the provider failed after retries.
        """
        self.messages.append({"role": "user", "content": instructions})
        self.log.write("stage_instructions", stage=stage, content=instructions)
        quiet = 0
        while True:
            limit = self.usage.exhausted(self.budget)
            if limit:
                self.log.write("budget_exhausted", stage=stage, limit=limit, **self.usage.summary())
                return StageEnd("budget", limit=limit)
            turn = self.session.respond(self.messages, TOOLS)
            self.usage.add(turn)
            self.messages.append(turn.message())
            self.log.write(
                "model_turn",
                stage=stage,
                turn=self.usage.turns,
                text=turn.text,
                tool_calls=[
                    {"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls
                ],
                tokens_in=turn.tokens_in,
                tokens_out=turn.tokens_out,
                cost_usd=turn.cost_usd,
                latency_s=round(turn.latency_s, 3),
            )
            if not turn.tool_calls:
                quiet += 1
                if quiet >= 2:
                    return StageEnd("stopped")
                self.messages.append({"role": "user", "content": NUDGE})
                continue
            quiet = 0
            note: str | None = None
            for call in turn.tool_calls:
                if note is not None:
                    result = ToolResult("not run: the stage was already submitted")
                else:
                    refusal = guard(call) if guard else None
                    started = time.monotonic()
                    result = (
                        ToolResult(f"error: {refusal}", {"refused": refusal})
                        if refusal
                        else self.workbench.execute(call)
                    )
                    self.log.write(
                        "tool",
                        stage=stage,
                        id=call.id,
                        name=call.name,
                        arguments=call.arguments,
                        duration_s=round(time.monotonic() - started, 3),
                        **result.log,
                    )
                    if result.submitted:
                        note = str(result.log.get("note", ""))
                self.messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": result.output}
                )
            if note is not None:
                return StageEnd("submitted", note=note)
