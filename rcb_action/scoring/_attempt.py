"""Score an answer for one snippet: the public face of grading.

A task with cases and checks is graded in two sandboxes:

1. **run** (sandbox A): the spliced code, ``src/`` and ``cases/``; the case runner
   returns plain data. No check, no expected value, no reference output is there.
2. **check** (sandbox B): ``checks/``, this attempt's outputs and the reference's
   outputs; neither the spliced code nor ``src/`` is there. pytest compares them.

The verdict is B's (:func:`rcb_action.scoring.grade_pytest`): no assertion runs in a
process that imported the model's code. A task with in-process tests runs pytest
in one sandbox with the code under test, as before; its verdict can be forged and
is labelled so.

The reference run (:func:`reference_run`) defines what a pass is: the reference
code's outputs, and the check ids each snippet's selection runs when the code is
right. It runs once per task hash, backend and environment, and is cached under
``$RCB_CACHE_DIR/reference``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

from rcb_action.paths import cache_dir
from rcb_action.sandbox import (
    CasesRaw,
    Sandbox,
    SandboxBackend,
    env_key,
    run_cases,
    run_pytest,
)
from rcb_action.scoring._classify import parse_junit
from rcb_action.scoring._grade import (
    TestRun,
    grade_cases,
    grade_checks,
    grade_crash,
    grade_pytest,
)
from rcb_action.scoring._reach import harness_reach
from rcb_action.scoring._run import VERDICT_PLUGIN, plugin_source, run_tests, task_files
from rcb_action.splice import splice
from rcb_action.tasks import INPUTS_DIR, Task

CASES_PROGRAM = "rcb_cases"
CHECKS_PLUGIN = "rcb_checks"
CANDIDATE_DIR = "candidate"
REFERENCE_DIR = "reference"
# Random cases derive their seed from RCB_SEED, and checks that regenerate inputs do the
# same; attempts run with seed 0, and validation runs the reference under several.
SEED_VARIABLE = "RCB_SEED"
# The cases one attempt runs (rcb_cases.py reads it): those its snippet's checks read.
ONLY_CASES_VARIABLE = "RCB_ONLY_CASES"


@dataclass
class Sandboxes:
    """The sandboxes one task is graded in: ``run`` for the code under test, ``check``
    for the checks (None for a task with in-process tests)."""

    run: Sandbox
    check: Sandbox | None
    backend: str

    def all(self) -> list[Sandbox]:
        return [s for s in (self.run, self.check) if s is not None]


def open_sandboxes(backend: SandboxBackend, task: Task) -> Sandboxes:
    """The sandboxes ``task`` needs, opened; give them back with :func:`release_sandboxes`."""
    run = backend.open(task)
    try:
        check = backend.open(task) if task.grading == "cases" else None
    except BaseException:
        backend.release(run)
        raise
    return Sandboxes(run=run, check=check, backend=backend.name)


def release_sandboxes(backend: SandboxBackend, sandboxes: Sandboxes) -> None:
    for sandbox in sandboxes.all():
        backend.release(sandbox)


@dataclass
class Expected:
    """The reference run: per selection, the ids that ran and passed (or why the
    reference failed), and for cases and checks the reference's outputs."""

    ids: dict[str, list[str]]
    errors: dict[str, str]
    seconds: float
    outputs: dict[str, bytes] = field(default_factory=dict)
    # Agent mode: the visible checks' ids, or why they cannot be run.
    visible_ids: list[str] = field(default_factory=list)
    visible_error: str | None = None
    # Per selection, the cases its checks read on the reference's run (every case
    # when a selection is absent): an attempt runs only those.
    cases: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class Scored:
    """One graded answer: the spliced file, the verdict, and the logs worth keeping."""

    spliced: str
    run: TestRun
    logs: dict[str, str] = field(default_factory=dict)


def selection_key(selection: list[str]) -> str:
    return "\0".join(selection)


def _selected(nodeid: str, selection: list[str]) -> bool:
    """Whether pytest run on ``selection`` would run ``nodeid`` (paths, files, node ids)."""
    for entry in selection:
        entry = entry.rstrip("/")
        if nodeid == entry or nodeid.startswith((entry + "::", entry + "[", entry + "/")):
            return True
    return False


def _plugins(*names: str) -> dict[str, bytes]:
    return {name: plugin_source(name) for name in names}


def _check_files(
    task: Task,
    candidate: dict[str, bytes],
    reference: dict[str, bytes],
    only: list[str] | None = None,
) -> dict[str, bytes]:
    files = task_files(task, only=task.check_files if only is None else only)
    for name, data in candidate.items():
        files[f"{CANDIDATE_DIR}/{name}"] = data
    for name, data in reference.items():
        files[f"{REFERENCE_DIR}/{name}"] = data
    return files


def _run_checks(
    sandboxes: Sandboxes,
    task: Task,
    selection: list[str],
    candidate: dict[str, bytes],
    reference: dict[str, bytes],
    *,
    expected: list[str] | None,
    only: list[str] | None = None,
    seed: int = 0,
) -> TestRun:
    if sandboxes.check is None:
        raise ValueError(f"task {task.id} has no check sandbox")
    timeout = float(task.config.timeout_s)
    raw = run_pytest(
        sandboxes.check,
        _check_files(task, candidate, reference, only),
        selection,
        plugins=_plugins(VERDICT_PLUGIN, CHECKS_PLUGIN),
        timeout_s=timeout,
        env={
            "RCB_CANDIDATE_DIR": f"{{base}}/{CANDIDATE_DIR}",
            "RCB_REFERENCE_DIR": f"{{base}}/{REFERENCE_DIR}",
            SEED_VARIABLE: str(seed),
        },
    )
    return grade_pytest(raw, expected=expected, timeout_s=timeout)


def _run_cases(
    sandboxes: Sandboxes,
    task: Task,
    overrides: dict[str, str] | None,
    seed: int = 0,
    only: list[str] | None = None,
) -> CasesRaw:
    env = {SEED_VARIABLE: str(seed)}
    if only is not None:
        env[ONLY_CASES_VARIABLE] = ",".join(only)
    return run_cases(
        sandboxes.run,
        task_files(task, overrides, only=task.run_files),
        runner=plugin_source(CASES_PROGRAM),
        targets=sorted(overrides or {}),
        cases_dir=task.config.cases_dir,
        timeout_s=float(task.config.timeout_s),
        env=env,
    )


def _recorded_reads(run: TestRun) -> dict[str, str | None]:
    """Per check of ``run``, the ``rcb_cases`` property rcb_checks wrote (the JSON list
    of the cases it read); empty when the report does not parse."""
    try:
        return {case.nodeid: case.properties.get("rcb_cases") for case in parse_junit(run.junit)}
    except ValueError:
        return {}


def _cases_read(recorded: dict[str, str | None], chosen: list[str]) -> list[str] | None:
    """The cases the ``chosen`` checks read (see :func:`_recorded_reads`); None (every
    case) when a check read the list of names or left no record."""
    read: set[str] = set()
    for nodeid in chosen:
        text = recorded.get(nodeid)
        if text is None:
            return None
        try:
            names = json.loads(text)
        except ValueError:
            return None
        if not isinstance(names, list) or "*" in names:
            return None
        read.update(str(name) for name in names)
    return sorted(read)


def _output_text(raw: CasesRaw) -> str:
    return raw.result.stdout + raw.result.stderr


# --- the reference run ------------------------------------------------------------

_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


# Bumped when what a reference run records changes (2: the cases each selection reads).
_REFERENCE_FORMAT = 2


def _cache_path(task: Task, backend: str, seed: int) -> Path:
    name = f"{task.id}-{task.sha}-{backend}-{env_key(task.env_dir)}-r{_REFERENCE_FORMAT}"
    return cache_dir("reference") / (f"{name}.json" if seed == 0 else f"{name}-seed{seed}.json")


def reference_run(task: Task, sandboxes: Sandboxes, *, seed: int = 0) -> Expected:
    """Run the reference once per distinct selection of ``task`` (cached per task hash,
    backend, environment and seed). Never raises for the task's fault: a failing
    reference is recorded in ``errors`` per selection.

    Args:
        task: the task.
        sandboxes: its open sandboxes.
        seed: ``RCB_SEED`` for the cases and checks; attempts are graded against seed 0,
            validation also runs others to show the checks hold for every seed.
    """
    path = _cache_path(task, sandboxes.backend, seed)
    with _lock_for(str(path)):
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8"))
            return Expected(
                ids=data["ids"],
                errors=data["errors"],
                seconds=data.get("seconds", 0.0),
                outputs={k: base64.b64decode(v) for k, v in data.get("outputs", {}).items()},
                visible_ids=data.get("visible_ids", []),
                visible_error=data.get("visible_error"),
                cases=data.get("cases", {}),
            )
        if task.grading == "cases":
            expected = _reference_cases(task, sandboxes, seed)
        else:
            expected = _reference_in_process(task, sandboxes.run)
        if not expected.errors and expected.visible_error is None:
            data = dataclasses.asdict(expected)
            data["outputs"] = {k: base64.b64encode(v).decode() for k, v in expected.outputs.items()}
            staging = path.with_suffix(".tmp")
            staging.write_text(json.dumps(data, indent=1), encoding="utf-8")
            staging.replace(path)
        return expected


def _selections(task: Task) -> dict[str, list[str]]:
    return {
        selection_key(task.tests_for(name)): task.tests_for(name) for name in task.snippet_names()
    }


def _reference_in_process(task: Task, sandbox: Sandbox) -> Expected:
    ids: dict[str, list[str]] = {}
    errors: dict[str, str] = {}
    seconds = 0.0
    for key, selection in _selections(task).items():
        run = run_tests(sandbox, task, selection)
        seconds += run.duration_s
        if run.passed:
            ids[key] = sorted(run.outcomes)
        else:
            errors[key] = f"{run.failure_class}: {run.message}"
    return Expected(ids=ids, errors=errors, seconds=seconds)


def _reference_case_errors(outputs: dict[str, bytes]) -> list[str]:
    """What went wrong in the reference's own cases (they must all return a value)."""
    try:
        data = json.loads(outputs["outputs.json"])
    except (KeyError, ValueError):
        return ["the reference cases wrote no readable outputs"]
    problems = []
    if data.get("compile_error"):
        problems.append(f"the reference does not compile: {data['compile_error']}")
    for module, info in sorted(data.get("modules", {}).items()):
        if "error" in info:
            problems.append(f"{module} failed to import: {info['error']}")
    for name, entry in sorted(data.get("cases", {}).items()):
        if "error" in entry:
            error = entry["error"]
            problems.append(f"case '{name}' raised {error.get('type')}: {error.get('message')}")
    if not data.get("cases"):
        problems.append("no case_* function was found in the cases folder")
    return problems


def _visible_files(task: Task) -> list[str]:
    """The check files of a visible run: the visible check files and the helpers every
    check may import (``conftest.py`` and modules whose name starts with ``_``)."""
    assert task.config.agent is not None
    named = {rel.split("::")[0] for rel in task.config.agent.checks}
    helpers = {
        rel
        for rel in task.check_files
        if Path(rel).name == "conftest.py"
        or Path(rel).name.startswith("_")
        or rel.startswith(f"{INPUTS_DIR}/")
    }
    return sorted(named | helpers)


def _visible_reference(task: Task, outputs: dict[str, bytes]) -> dict[str, bytes]:
    """The reference's outputs of the visible cases only."""
    if task.config.agent is None:
        return {}
    data = json.loads(outputs["outputs.json"])
    keep = set(task.config.agent.cases)
    data["cases"] = {k: v for k, v in data["cases"].items() if k in keep}
    return {**outputs, "outputs.json": json.dumps(data).encode()}


def _reference_cases(task: Task, sandboxes: Sandboxes, seed: int = 0) -> Expected:
    selections = _selections(task)
    raw = _run_cases(sandboxes, task, None, seed)
    early = grade_cases(raw, timeout_s=float(task.config.timeout_s))
    if early is not None:
        why = f"the reference cases failed: {early.failure_class}: {early.message}"
        return Expected(ids={}, errors=dict.fromkeys(selections, why), seconds=early.duration_s)
    problems = _reference_case_errors(raw.outputs)
    if problems:
        why = "; ".join(problems)[:500]
        return Expected(
            ids={}, errors=dict.fromkeys(selections, why), seconds=raw.result.duration_s
        )
    outputs = raw.outputs
    # One run of every selected check; each selection's ids are read off it.
    everything = sorted({entry for selection in selections.values() for entry in selection})
    run = _run_checks(sandboxes, task, everything, outputs, outputs, expected=None, seed=seed)
    seconds = raw.result.duration_s + run.duration_s
    ids: dict[str, list[str]] = {}
    errors: dict[str, str] = {}
    for key, selection in selections.items():
        chosen = sorted(n for n in run.outcomes if _selected(n, selection))
        failed = [n for n in chosen if run.outcomes[n] != "passed"]
        if not run.passed and (failed or not chosen):
            errors[key] = f"{run.failure_class}: {run.message}"
        elif not chosen:
            errors[key] = f"no check matches the selection {selection}"
        else:
            ids[key] = chosen
    recorded = _recorded_reads(run)
    cases = {key: read for key in ids if (read := _cases_read(recorded, ids[key])) is not None}
    expected = Expected(ids=ids, errors=errors, seconds=seconds, outputs=outputs, cases=cases)
    if task.config.agent is not None:
        visible = _visible_reference(task, outputs)
        shown = _run_checks(
            sandboxes,
            task,
            task.config.agent.checks,
            visible,
            visible,
            expected=None,
            only=_visible_files(task),
            seed=seed,
        )
        expected.seconds += shown.duration_s
        if shown.passed:
            expected.visible_ids = sorted(shown.outcomes)
        else:
            expected.visible_error = (
                "the visible checks fail on the reference with only the visible cases' outputs "
                f"(do they read a hidden case?): {shown.failure_class}: {shown.message}"
            )
    return expected


def reference_seconds(task: Task, sandboxes: Sandboxes) -> float:
    """How long the reference takes to grade, run now (not cached), as a maintainer
    would run it: every selected check (or test) in one pytest start."""
    everything = sorted({entry for selection in _selections(task).values() for entry in selection})
    if task.grading != "cases":
        return run_tests(sandboxes.run, task, everything).duration_s
    raw = _run_cases(sandboxes, task, None)
    checks = _run_checks(sandboxes, task, everything, raw.outputs, raw.outputs, expected=None)
    return raw.result.duration_s + checks.duration_s


# --- scoring an answer ------------------------------------------------------------


def score_snippet(
    sandboxes: Sandboxes,
    task: Task,
    snippet: str,
    code: str,
    expected: Expected,
    *,
    reuse: bool = True,
) -> Scored:
    """Splice ``code`` in place of ``snippet`` and grade it.

    An answer whose spliced file is the task's own, byte for byte, takes the reference
    run's verdict (``reuse``, the default) instead of running again.

    Nothing of the answer is compiled or parsed on the host: a file that does not
    compile fails in the sandbox, as ``syntax``.

    Raises:
        KeyError: the reference run has no ids for this snippet's selection (the
            task is invalid: check ``expected.errors`` first).
        SandboxStartError: a sandbox never started.
        Exception: whatever a sandbox raises when it cannot run at all.
    """
    path = task.snippets[snippet].path
    spliced = splice(task, snippet, code)
    key = selection_key(task.tests_for(snippet))
    ids = expected.ids[key]
    if reuse and _is_the_task_code(task, path, spliced):
        return _reference_verdict(task, spliced, code, ids)
    if task.grading != "cases":
        run = run_tests(
            sandboxes.run, task, task.tests_for(snippet), overrides={path: spliced}, expected=ids
        )
        run = _distrust_reach(run, code)
        return Scored(
            spliced, run, {"pytest-output.txt": run.stdout + run.stderr, "junit.xml": run.junit}
        )
    read = expected.cases.get(key)
    raw = _run_cases(sandboxes, task, {path: spliced}, only=read)
    logs = {"cases-output.txt": _output_text(raw)}
    early = grade_cases(raw, timeout_s=float(task.config.timeout_s)) or grade_crash(raw, read)
    if early is not None:
        return Scored(spliced, dataclasses.replace(early, tests_expected=len(ids)), logs)
    checks = _run_checks(
        sandboxes, task, task.tests_for(snippet), raw.outputs, expected.outputs, expected=ids
    )
    logs["checks-output.txt"] = checks.stdout + checks.stderr
    logs["junit.xml"] = checks.junit
    return Scored(spliced, grade_checks(checks, raw), logs)


# What an answer that gives back the task's own file records instead of its logs.
REUSED_NOTE = (
    "The spliced file is the task's own code, byte for byte: the reference run already\n"
    "ran it (every case, every selected check passed), so it is not run again and its\n"
    "verdict is the reference run's. (`rcb validate` runs it as an attempt runs, on only\n"
    "the cases this snippet's checks read, and fails the task if that does not pass.)\n"
)


def _is_the_task_code(task: Task, path: str, spliced: str) -> bool:
    """Whether ``spliced`` enters the sandbox as the task's own file, byte for byte (the
    reference answer, or a model's that reproduces the authors' code exactly)."""
    return task_files(task, {path: spliced}, only=[path]) == task_files(task, only=[path])


def _distrust_reach(run: TestRun, code: str) -> TestRun:
    """An in-process pass whose code reaches into the harness fails, as not trusted."""
    reach = harness_reach(code) if run.passed else []
    if not reach:
        return run
    return dataclasses.replace(
        run,
        status="fail",
        failure_class="sandbox_violation",
        message=f"passed, but not trusted: the code reaches into {'; '.join(reach)}",
    )


def _reference_verdict(task: Task, spliced: str, code: str, ids: list[str]) -> Scored:
    """The verdict of an answer whose spliced file is the task's own: the reference run
    (which ``ids`` come from, every one passed) already ran these files. The same reach
    check as a run applies."""
    run = TestRun(
        status="pass",
        tests_expected=len(ids),
        tests_ran=len(ids),
        tests_passed=len(ids),
        outcomes=dict.fromkeys(ids, "passed"),
    )
    if task.grading != "cases":
        run = _distrust_reach(run, code)
    return Scored(spliced, run, {"verdict.txt": REUSED_NOTE})


def run_visible(
    sandboxes: Sandboxes, task: Task, snippet: str, code: str, expected: Expected
) -> TestRun:
    """Agent mode: ``code`` graded by the visible checks only, in a check sandbox that
    holds no other check and only the visible cases' reference outputs.

    Raises:
        ValueError: the task has no visible checks (agent mode needs cases and checks
            and an ``agent`` block in task.yaml).
    """
    agent = task.config.agent
    if task.grading != "cases" or agent is None or not expected.visible_ids:
        raise ValueError(f"task {task.id} has no visible checks")
    path = task.snippets[snippet].path
    raw = _run_cases(sandboxes, task, {path: splice(task, snippet, code)}, only=agent.cases)
    early = grade_cases(raw, timeout_s=float(task.config.timeout_s))
    if early is not None:
        return early
    checks = _run_checks(
        sandboxes,
        task,
        agent.checks,
        raw.outputs,
        _visible_reference(task, expected.outputs),
        expected=expected.visible_ids,
        only=_visible_files(task),
    )
    return grade_checks(checks, raw)
