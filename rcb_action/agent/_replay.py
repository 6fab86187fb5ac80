"""``replay:FILE`` for agents: scripted turns recorded or written elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

from rcb_action.agent._base import (
    AgentModel,
    AgentSession,
    AgentTurn,
    ScriptedSession,
    turn_from_dict,
)
from rcb_action.errors import RcbError
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
        names: set[str] = set()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            raise RcbError(f"{path}: replay file not found (--model replay:FILE)") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RcbError(f"{where}: not valid JSON ({exc.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get("task"), str):
                raise RcbError(f"{where}: expected an object with a string field 'task'")
            sample = row.get("sample", 0)
            if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
                raise RcbError(f"{where}: field 'sample' must be a non-negative integer")
            unknown = set(row) - {"task", "sample", "turns", "model"}
            if unknown:
                raise RcbError(f"{where}: unknown field '{sorted(unknown)[0]}'")
            turns = row.get("turns")
            if not isinstance(turns, list):
                raise RcbError(f"{where}: field 'turns' must be a list")
            try:
                script = [turn_from_dict(turn, index) for index, turn in enumerate(turns)]
            except (AttributeError, ValueError) as exc:
                raise RcbError(f"{where}: field 'turns': {exc}") from None
            key = (row["task"], sample)
            if key in self._scripts:
                raise RcbError(f"{where}: a second script for task {key[0]!r} sample {sample}")
            self._scripts[key] = script
            if isinstance(row.get("model"), str):
                names.add(row["model"])
        self.name = names.pop() if len(names) == 1 else f"replay:{path.stem}"

    def start(self, task: Task, sample: int) -> AgentSession:
        return ScriptedSession(self._scripts.get((task.id, sample), []))
