"""``replay:FILE`` for agents: scripted turns recorded or written elsewhere."""

from __future__ import annotations

from pathlib import Path

from rcb_action.agent._base import (
    AgentModel,
    AgentSession,
    AgentTurn,
    ScriptedSession,
    turn_from_dict,
)
from rcb_action.errors import RcbError
from rcb_action.models import read_replay
from rcb_action.tasks import Task


class ReplayAgent(AgentModel):
    """Plays the turns a JSONL file holds, one line per (task, sample):

    ``{"task": "<task-id>", "sample": 0, "turns": [{"content": "...",
    "tool_calls": [{"name": "write_file", "arguments": {"path": "plan.md", "content": "..."}}]}]}``

    ``sample`` defaults to 0; an optional ``"model"`` names the results (else
    ``replay:<file stem>``). A (task, sample) missing from the file gets no turns.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._scripts: dict[tuple[str, int], list[AgentTurn]] = {}
        rows, self.name = read_replay(path, ("task",), {"sample", "turns", "model"})
        for where, row in rows:
            turns = row.get("turns")
            if not isinstance(turns, list):
                raise RcbError(f"{where}: field 'turns' must be a list")
            try:
                script = [turn_from_dict(turn, index) for index, turn in enumerate(turns)]
            except (AttributeError, ValueError) as exc:
                raise RcbError(f"{where}: field 'turns': {exc}") from None
            key = (row["task"], row["sample"])
            if key in self._scripts:
                raise RcbError(f"{where}: a second script for task {key[0]!r} sample {key[1]}")
            self._scripts[key] = script

    def start(self, task: Task, sample: int) -> AgentSession:
        return ScriptedSession(self._scripts.get((task.id, sample), []))
