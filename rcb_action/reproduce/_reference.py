"""The gold run's agent: plays a task's reference reproduction through the same stages.

The reference folder holds ``plan.md``, ``requirements.txt``, ``reproduce.sh`` and the
code. The scripted agent writes the plan, builds the venv from the wheelhouse, writes
the code and submits; the harness checks and grades it exactly as it would a model's.
A task counts only once its gold run passes every stage.
"""

from __future__ import annotations

import json

from rcb_action.agent import AgentModel, AgentSession, AgentTurn, ScriptedSession, ToolCall
from rcb_action.tasks import Task

SETUP_COMMAND = "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt"
_FIRST = ("plan.md", "requirements.txt")


def _call(number: int, name: str, **arguments: object) -> ToolCall:
    return ToolCall(id=f"gold_{number}", name=name, arguments=json.dumps(arguments))


def reference_files(task: Task) -> dict[str, str]:
    """The reference reproduction's files, by path relative to its folder."""
    assert task.config.reproduction is not None
    folder = task.root / task.config.reproduction.reference
    return {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def reference_turns(task: Task) -> list[AgentTurn]:
    """One turn per agent stage: plan, env_setup, code_impl, train_debug."""
    files = reference_files(task)
    numbers = iter(range(10_000))

    def write(path: str) -> ToolCall:
        return _call(next(numbers), "write_file", path=path, content=files[path])

    def submit() -> ToolCall:
        return _call(next(numbers), "submit", note="gold reproduction")

    code = [write(path) for path in files if path not in _FIRST]
    return [
        AgentTurn(tool_calls=[write("plan.md"), submit()]),
        AgentTurn(
            tool_calls=[
                write("requirements.txt"),
                _call(next(numbers), "run", command=SETUP_COMMAND, timeout_s=600),
                submit(),
            ]
        ),
        AgentTurn(tool_calls=[*code, submit()]),
        AgentTurn(tool_calls=[submit()]),
    ]


class ReferenceAgent(AgentModel):
    """``reference``: the task's own reproduction, played through the stages."""

    name = "reference"

    def start(self, task: Task, sample: int) -> AgentSession:
        return ScriptedSession(reference_turns(task))
