"""The gold run's agent, and the scripted baselines built from the same reference.

The reference folder holds ``plan.md``, ``requirements.txt``, ``reproduce.sh`` and the
code. The gold agent writes the plan, builds the venv from the wheelhouse, writes
the code and submits; the harness checks and grades it exactly as it would a model's.
A task counts only once its gold run passes every stage.

The baselines (``baseline:fabricator``, ``baseline:lazy``) show on the leaderboard what
the grading does with an agent that skips the work, until real models are run: the
fabricator keeps the reference's code but its ``reproduce.sh`` writes the published
numbers without running it; the lazy agent writes the plan and nothing else.
"""

from __future__ import annotations

import json
import shlex

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


BASELINES = {
    "fabricator": "keeps the reference code, but reproduce.sh writes the published numbers "
    "without running it",
    "lazy": "writes the reference plan, then stops",
}
BASELINE_PREFIX = "baseline:"


def baseline_label(model: str) -> str | None:
    """What a scripted baseline is, for the leaderboard; None for a real model."""
    if model == ReferenceAgent.name:
        return "scripted baseline: the task's gold reproduction, played through the stages"
    kind = model.removeprefix(BASELINE_PREFIX)
    if model.startswith(BASELINE_PREFIX) and kind in BASELINES:
        return f"scripted baseline: {BASELINES[kind]}"
    return None


def _fabricated_results(task: Task) -> str:
    assert task.config.reproduction is not None and task.expected is not None
    runs = task.config.reproduction.runs
    metrics = {name: [m.mean] * runs for name, m in task.expected.metrics.items()}
    return json.dumps({"metrics": metrics})


def baseline_turns(task: Task, kind: str) -> list[AgentTurn]:
    """The turns of baseline ``kind``, from the task's reference reproduction."""
    turns = reference_turns(task)
    if kind == "lazy":
        return turns[:1]
    assert kind == "fabricator", kind
    script = (
        "#!/usr/bin/env bash\n# Writes the paper's numbers; never runs the method.\n"
        f"printf '%s' {shlex.quote(_fabricated_results(task))} > results.json\n"
    )
    code = turns[2]
    calls = [c for c in code.tool_calls if '"reproduce.sh"' not in c.arguments]
    fake = ToolCall(
        id="baseline_script",
        name="write_file",
        arguments=json.dumps({"path": "reproduce.sh", "content": script}),
    )
    return [*turns[:2], AgentTurn(tool_calls=[*calls[:-1], fake, calls[-1]]), turns[3]]


class BaselineAgent(AgentModel):
    """``baseline:KIND``: a scripted agent that skips the work in a known way."""

    def __init__(self, kind: str) -> None:
        if kind not in BASELINES:
            known = ", ".join(f"{BASELINE_PREFIX}{k}" for k in BASELINES)
            raise ValueError(f"no baseline '{kind}' (known: {known})")
        self.kind = kind
        self.name = f"{BASELINE_PREFIX}{kind}"

    def start(self, task: Task, sample: int) -> AgentSession:
        return ScriptedSession(baseline_turns(task, self.kind))
