"""The stages an agent goes through, what it is told at each, and how each is checked.

``plan`` (prose in plan.md, before any code), ``env_setup`` (a venv with what
requirements.txt names), ``code_impl`` (code that compiles and whose imports
resolve, and the entry point reproduce.sh), ``train_debug`` (the harness reruns the
submitted files in a fresh sandbox with seeds of its own, see ``_rerun``) and
``result_check`` (those reruns' results against the paper's). Every check runs in a
sandbox.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcb_action.agent import TOOL_NAMES, ToolCall
from rcb_action.reproduce._data import shipped, split_names
from rcb_action.reproduce._texts import PAPER_FILE, ReproductionTexts
from rcb_action.reproduce._wheelhouse import WHEELHOUSE_MOUNT
from rcb_action.sandbox import ExecResult, Sandbox
from rcb_action.tasks import EXPERIMENT_FILE, Task

WORKDIR = "project"
HARNESS_DIR = ".rcb"
CHECKS_SOURCE = Path(__file__).with_name("sandbox_checks.py")
ENTRY_POINT = "reproduce.sh"
RESULTS = "results.json"
CONCLUSIONS_FILE = "conclusions.md"
MIN_PLAN_WORDS = 80
CHECK_TIMEOUT_S = 300
# Files of the attempt kept in its log folder and shown to the judge.
CODE_SUFFIXES = (".py", ".sh", ".txt", ".md", ".cfg", ".toml", ".yaml", ".yml", ".json")
MAX_KEPT_FILE_BYTES = 200_000

AGENT_STAGES = ("plan", "env_setup", "code_impl", "train_debug")


@dataclass
class Check:
    """A stage check: passed or not, why not, and the text for the stage's log."""

    passed: bool
    error: str | None = None
    log: str = ""


def _results_format(task: Task) -> str:
    settings = task.config.reproduction
    assert settings is not None
    fields = [f'  "metrics": {{"<metric>": [one number per run, at least {settings.runs} runs]}}']
    if settings.curves:
        fields.append('  "curves": {"<curve>": {"x": [numbers], "y": [numbers]}}')
    data = split_names(task)
    if settings.splits and not data:
        fields.append('  "splits": {"<split>": ["<sha256 hex digest of each example in it>", ...]}')
    lines = ["{", ",\n".join(fields), "}", "\nMetrics:"]
    lines += [f"- {name}: {text}" for name, text in settings.metrics.items()]
    if settings.curves:
        lines.append("\nCurves:")
        lines += [f"- {name}: {text}" for name, text in settings.curves.items()]
    if data:
        lines.append(
            "\nData: data/<split>/ in your folder (read-only), one folder per split: "
            + ", ".join(data)
            + ". Read the data from there; the harness records which files each run opens."
        )
    elif settings.splits:
        lines.append("\nSplits (list the hash of every example of each):")
        lines += [f"- {name}" for name in settings.splits]
    return "\n".join(lines)


def system_prompt(task: Task, packages: list[str], budget: dict[str, float]) -> str:
    """What the agent is told once, at the start."""
    settings = task.config.reproduction
    assert settings is not None
    return f"""\
You are a research engineer reproducing the main experiment of a paper, on your own,
in a sandbox: a Debian machine with python3 and bash, one CPU core and no network.
Your working folder is the current directory. The paper's own text is in {PAPER_FILE}
there, and {EXPERIMENT_FILE} specifies the experiment to run at this sandbox's scale (its
settings, runs and seeds, what to report); where the two differ on a setting,
{EXPERIMENT_FILE} decides. You act only through the tools: run (a bash command),
read_file, write_file and submit.

Packages: pip cannot reach any index. It installs only from a local wheelhouse at
{WHEELHOUSE_MOUNT}, already configured, which holds: {", ".join(packages) or "nothing"}
(with their dependencies).

The work goes in stages, and the harness checks each one when you call submit; a stage
that fails its check ends the attempt. Each stage's goal is given when it starts:
plan, env_setup, code_impl, train_debug; after that the harness grades the results
(result_check) against the paper's.

Your code must write {RESULTS} in the working folder, a JSON object:
{_results_format(task)}

Seeds: the harness runs bash {ENTRY_POINT} itself, with an integer in the environment
variable RCB_SEED, a different one each time and unknown in advance. Run i of the
experiment (i = 0 to {settings.runs - 1}) must draw all its randomness from seed RCB_SEED + i
wherever the paper uses seed i (with RCB_SEED unset, use 0).

Budget for the whole attempt: {int(budget["turns"])} turns, {int(budget["tokens"])} tokens,
{int(budget["wall_time_s"])} s of wall time, ${budget["cost_usd"]:g}. The experiment, run by
the harness, may take at most {settings.run_timeout_s} s.
"""


def stage_instructions(stage: str, task: Task, texts: ReproductionTexts) -> str:
    """The message that opens ``stage``."""
    settings = task.config.reproduction
    assert settings is not None
    if stage == "plan":
        return f"""\
Stage 1, plan. Read the experiment and the paper below (they are also in
{EXPERIMENT_FILE} and {PAPER_FILE}) and write your implementation plan in prose to plan.md:
the method as you understand it (the equations you will implement), the experiment
(settings, runs and seeds, what each metric and curve is) and how you will check your
numbers against the paper. At least {MIN_PLAN_WORDS} words of prose. No code and no
commands yet: this stage allows read_file, write_file on plan.md and submit. Call submit
when the plan is written.

# {EXPERIMENT_FILE}

{texts.experiment}

# {PAPER_FILE}: {task.config.title} ({task.config.citation})

{texts.paper_text}"""
    if stage == "env_setup":
        return """\
Stage 2, env_setup. Create a virtual environment at .venv (python3 -m venv .venv) and
install what your code needs from the wheelhouse; list those packages in requirements.txt
(one per line; pin them with == if you like). The check: every package requirements.txt
names is installed in .venv. Call submit when done."""
    if stage == "code_impl":
        return f"""\
Stage 3, code_impl. Write the code, and {ENTRY_POINT}: a bash script that runs the whole
experiment with .venv's python and writes {RESULTS} as described. The check: {ENTRY_POINT}
exists, every .py file compiles and every import resolves in .venv. Call submit when done."""
    return f"""\
Stage 4, train_debug. Run the experiment (bash {ENTRY_POINT}) and debug it until it runs
to the end and writes {RESULTS}; compare your numbers and curves with the paper's before
you submit. When you submit, the harness copies your text files ({", ".join(CODE_SUFFIXES)},
at most {MAX_KEPT_FILE_BYTES // 1000} KB each; not .venv, not {RESULTS}, nothing else) into a
fresh sandbox with no network, creates .venv there from requirements.txt (pip, the same
wheelhouse), and runs bash {ENTRY_POINT} {settings.reruns} times, each with its own RCB_SEED,
for at most {settings.run_timeout_s} s each. Only the {RESULTS} of those runs are graded; the
{RESULTS} you leave is kept and compared with them. Before you submit, write
{CONCLUSIONS_FILE}: what your numbers show against the paper's claims. The judge checks that
your conclusions follow from the harness's results."""


def plan_guard(call: ToolCall) -> str | None:
    """The plan stage allows reading, writing plan.md, and submit."""
    if call.name in ("read_file", "submit") or call.name not in TOOL_NAMES:
        return None
    if call.name == "write_file":
        try:
            path = call.parsed().get("path")
        except ValueError:
            return None
        if isinstance(path, str) and path.strip().removeprefix("./") == "plan.md":
            return None
    return "the plan stage allows read_file, write_file on plan.md, and submit; no code yet"


def prose_words(text: str) -> int:
    """Words of prose: fenced code blocks do not count."""
    prose = re.sub(r"```.*?(```|\Z)", " ", text, flags=re.S)
    return len(re.findall(r"[^\W\d_]{2,}", prose))


class StageChecks:
    """The checks of one attempt's sandbox (the agent works in ``project/``)."""

    def __init__(self, sandbox: Sandbox, task: Task) -> None:
        self.sandbox = sandbox
        self.task = task
        self.root = f"{sandbox.workspace}/{WORKDIR}"
        self.venv_python = f"{self.root}/.venv/bin/python"
        self.checks = f"{sandbox.workspace}/{HARNESS_DIR}/{CHECKS_SOURCE.name}"

    def prepare(self, texts: ReproductionTexts) -> None:
        """The agent's folder, the paper, the experiment and the task's data in it, and
        the harness's check script (all read-only)."""
        self.sandbox.mkdir(WORKDIR, writable=True)
        paper = {}
        if texts.paper is not None:  # a scripted agent may run without it
            paper = {f"{WORKDIR}/{PAPER_FILE}": texts.paper.text.encode("utf-8")}
        self.sandbox.write_files(
            {
                **paper,
                f"{WORKDIR}/{EXPERIMENT_FILE}": texts.experiment.encode("utf-8"),
                f"{HARNESS_DIR}/{CHECKS_SOURCE.name}": CHECKS_SOURCE.read_bytes(),
                **{f"{WORKDIR}/{p}": data for p, data in shipped(self.task).items()},
            },
            writable=False,
        )

    def read(self, rel: str) -> str | None:
        """A file of the agent's folder, or None when it is missing or unreadable."""
        try:
            return self.sandbox.read_file(f"{WORKDIR}/{rel}").decode("utf-8", "replace")
        except (OSError, ValueError):
            return None

    def _script(self, python: str, *args: str) -> tuple[dict[str, Any] | None, str]:
        result = self.sandbox.exec(
            [python, self.checks, *args], timeout_s=CHECK_TIMEOUT_S, cwd=WORKDIR
        )
        log = f"$ {python} {CHECKS_SOURCE.name} {' '.join(args)}\n{result.stdout}{result.stderr}"
        try:
            data = json.loads(result.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return None, log
        return (data if isinstance(data, dict) else None), log

    def plan(self) -> tuple[Check, str]:
        text = self.read("plan.md")
        if text is None:
            return Check(False, "plan.md was not written"), ""
        words = prose_words(text)
        log = f"plan.md: {len(text)} characters, {words} words of prose\n"
        if words < MIN_PLAN_WORDS:
            error = f"plan.md has {words} words of prose; a plan needs at least {MIN_PLAN_WORDS}"
            return Check(False, error, log), text
        return Check(True, None, log), text

    def env(self) -> Check:
        if self.read("requirements.txt") is None:
            return Check(False, "requirements.txt was not written")
        data, log = self._script(self.venv_python, "env", "requirements.txt")
        if data is None:
            return Check(False, "no working .venv/bin/python: create the venv at .venv", log)
        if not data.get("ok"):
            return Check(False, "; ".join(map(str, data.get("errors", [])))[:500], log)
        return Check(True, None, log)

    def code(self) -> Check:
        data, log = self._script(self.venv_python, "code", ENTRY_POINT)
        if data is None:
            return Check(False, "the code check could not run in .venv", log)
        errors = list(data.get("errors", []))
        if not data.get("files"):
            errors.append("no Python file was written")
        if not errors:
            syntax = self.sandbox.exec(
                ["bash", "-n", ENTRY_POINT], timeout_s=CHECK_TIMEOUT_S, cwd=WORKDIR
            )
            log += f"$ bash -n {ENTRY_POINT}\n{syntax.stderr}"
            if syntax.returncode != 0:
                errors.append(f"{ENTRY_POINT} is not valid bash: {syntax.stderr.strip()[:200]}")
        if errors:
            return Check(False, "; ".join(map(str, errors))[:500], log)
        return Check(True, None, log)

    def own_results(self) -> dict[str, Any] | None:
        """The results.json the agent's own last run left, when it parses (kept to compare
        with the harness's reruns, never graded)."""
        text = self.read(RESULTS)
        try:
            data = json.loads(text) if text is not None else None
        except json.JSONDecodeError:
            return None
        return data if isinstance(data, dict) else None

    def run(
        self, extra_env: dict[str, str] | None = None
    ) -> tuple[Check, dict[str, Any] | None, float]:
        """Run the entry point as the harness, then read the results it wrote; also the
        run's wall time."""
        settings = self.task.config.reproduction
        assert settings is not None
        self.sandbox.remove(f"{WORKDIR}/{RESULTS}")
        env = {"PATH": f"{self.root}/.venv/bin:/usr/bin:/bin", "VIRTUAL_ENV": f"{self.root}/.venv"}
        env.update(extra_env or {})
        result = self.sandbox.exec(
            ["bash", ENTRY_POINT], timeout_s=settings.run_timeout_s, cwd=WORKDIR, env=env
        )
        return (*self._results_of(result, settings.run_timeout_s), result.duration_s)

    def _results_of(
        self, result: ExecResult, timeout_s: int
    ) -> tuple[Check, dict[str, Any] | None]:
        """The check of one run of the entry point, and the results it wrote."""
        log = f"$ bash {ENTRY_POINT}\n[stdout]\n{result.stdout}\n[stderr]\n{result.stderr}\n"
        log += f"[exit status {result.returncode}, {result.duration_s:.1f} s]\n"
        if result.timed_out:
            return Check(False, f"bash {ENTRY_POINT} ran past the {timeout_s} s limit", log), None
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or [""])[-1][:300]
            reason = "killed for exceeding the memory limit" if result.oom_killed else last
            said = f": {reason}" if reason else " and printed nothing on stderr"
            return Check(
                False, f"bash {ENTRY_POINT} exited with status {result.returncode}{said}", log
            ), None
        text = self.read(RESULTS)
        if text is None:
            return Check(False, f"bash {ENTRY_POINT} exited 0 but wrote no {RESULTS}", log), None
        log += f"[{RESULTS}]\n{text}\n"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return Check(False, f"{RESULTS} is not valid JSON ({exc.msg})", log), None
        if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
            return Check(False, f"{RESULTS} has no 'metrics' object", log), None
        return Check(True, None, log), data

    def files(self) -> dict[str, str]:
        """The attempt's text files (no venv, nothing large), for the logs and the judge."""
        data, _ = self._script("python3", "files")
        out: dict[str, str] = {}
        for entry in (data or {}).get("files", []):
            try:
                path, size = str(entry[0]), int(entry[1])
            except (TypeError, ValueError, IndexError):
                continue
            if path.endswith(CODE_SUFFIXES) and size <= MAX_KEPT_FILE_BYTES:
                text = self.read(path)
                if text is not None:
                    out[path] = text
        return out
