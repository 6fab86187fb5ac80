"""The gold run's agent, and the scripted baselines built from the same reference.

The reference folder holds ``plan.md``, ``requirements.txt``, ``reproduce.sh`` and the
code. The gold agent writes the plan, builds the venv from the wheelhouse, writes
the code and submits; the harness checks and grades it exactly as it would a model's.
A task counts only once its gold run passes every stage.

The baselines show on the leaderboard what the grading does with an agent that skips
the work, until real models are run, and they are the adversaries every reproduction
task must catch (``tests/test_reproduce_adversaries.py``). Each is built from the
task's reference, so it works on any task: the fabricator keeps the reference's code
but its ``reproduce.sh`` writes the published numbers without running it; the
never-caller writes seeded noise around them; the constant agent runs the reference
with its seed hard-wired; the copier runs it, then writes the published numbers over its
results; the split liar runs it and reports split hashes of its own; the lazy agent
writes the plan and nothing else.
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
    "never-calls": "keeps the reference code, but reproduce.sh writes seeded noise around the "
    "published numbers without calling it",
    "constant": "runs the reference with its seed hard-wired (the same numbers for any seed)",
    "copied": "runs the reference, then writes the published numbers over its results",
    "split-liar": "runs the reference, then reports split hashes of its own making",
    "lazy": "writes the reference plan, then stops",
}
# The flag each adversary must be caught by, on every reproduction task (the lazy agent
# stops at the first check that needs code, so it has none).
BASELINE_FLAGS = {
    "fabricator": "written in the submitted files, not computed",
    "never-calls": "never ran in the reruns",
    "constant": "reruns with different seeds gave identical numbers",
    "copied": "written in the submitted files, not computed",
    "split-liar": "that the task does not have|not the files of it the reruns read",
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


def _published(task: Task) -> dict[str, tuple[float, float]]:
    assert task.expected is not None
    return {name: (m.mean, m.std) for name, m in task.expected.metrics.items()}


def _python_step(comment: str, code: str) -> str:
    """Lines of ``reproduce.sh`` that run ``code`` from a heredoc (no submitted file)."""
    return f"# {comment}\npython - <<'RCB_EOF'\n{code}RCB_EOF\n"


def _adversary_script(task: Task, kind: str, reference: str) -> str:
    """``reproduce.sh`` of adversary ``kind``, made from the reference's script."""
    assert task.config.reproduction is not None
    runs = task.config.reproduction.runs
    published = _published(task)
    if kind == "fabricator":
        return (
            "#!/usr/bin/env bash\n# Writes the paper's numbers; never runs the method.\n"
            f"printf '%s' {shlex.quote(_fabricated_results(task))} > results.json\n"
        )
    if kind == "never-calls":
        code = (
            "import json, os, random\n"
            "noise = random.Random(int(os.environ.get('RCB_SEED', '0')))\n"
            f"published = {published!r}\n"
            "metrics = {n: [m + s * noise.gauss(0, 0.3) for _ in range("
            f"{runs})] for n, (m, s) in published.items()}}\n"
            "json.dump({'metrics': metrics}, open('results.json', 'w'))\n"
        )
        return "#!/usr/bin/env bash\nset -euo pipefail\n" + _python_step(
            "Plausible numbers, seeded; the method's code is never called.", code
        )
    if kind == "constant":
        lines = reference.splitlines(keepends=True)
        at = 1 if lines and lines[0].startswith("#!") else 0
        pinned = "export RCB_SEED=0  # the seed rcb gives is ignored\n"
        return "".join([*lines[:at], pinned, *lines[at:]])
    body = reference if reference.endswith("\n") else reference + "\n"
    if kind == "copied":
        means = {name: [mean] * runs for name, (mean, _) in published.items()}
        code = (
            "import json\nresults = json.load(open('results.json'))\n"
            f"results['metrics'].update({means!r})\n"
            "json.dump(results, open('results.json', 'w'))\n"
        )
        return body + _python_step("The paper's numbers over the computed ones.", code)
    assert kind == "split-liar", kind
    names = [*task.config.reproduction.splits] or ["train", "test"]
    code = (
        "import hashlib, json\nresults = json.load(open('results.json'))\n"
        f"names = {names!r}\n"
        "results['splits'] = {n: [hashlib.sha256(f'{n}-{i}'.encode()).hexdigest() "
        "for i in range(4)] for n in names}\n"
        "json.dump(results, open('results.json', 'w'))\n"
    )
    return body + _python_step("Split hashes of examples that were never read.", code)


def baseline_turns(task: Task, kind: str) -> list[AgentTurn]:
    """The turns of baseline ``kind``, from the task's reference reproduction."""
    turns = reference_turns(task)
    if kind == "lazy":
        return turns[:1]
    script = _adversary_script(task, kind, reference_files(task)["reproduce.sh"])
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
