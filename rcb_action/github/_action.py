"""The Action's evaluate step: its inputs turned into one ``rcb evaluate`` run, then a report.

Inputs arrive as strings (empty when not given). They are checked here so that a
bad input is one line naming the input, not an argparse usage dump.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcb_action.errors import RcbError
from rcb_action.github._plan import split_list
from rcb_action.github._workflow import annotation

REPORT_JSON = "report.json"
REPORT_MARKDOWN = "report.md"
_PAPER = ("with", "without", "both", "notes")
_SANDBOX = ("local", "docker")


@dataclass(frozen=True)
class ActionInputs:
    """The Action's inputs, as the runner hands them over (strings)."""

    models: str = "reference"
    tasks: str = ""
    samples: str = "1"
    sandbox: str = "local"
    paper: str = "with"
    shard: str = ""
    fail_under: str = ""
    results_dir: str = "rcb-results"
    tasks_dir: str = ""
    registry: str = ""
    workers: str = ""
    concurrency: str = ""
    max_cost: str = ""


@dataclass
class EvaluateOutcome:
    """What the step did: the exit code, and the report when the run finished."""

    exit_code: int
    argv: list[str]
    report: dict[str, Any] | None = None
    report_path: Path | None = None
    models: list[str] = field(default_factory=list)


def _positive_int(name: str, value: str) -> str:
    if not re.fullmatch(r"\d+", value.strip()) or int(value) < 1:
        raise RcbError(f"input '{name}': '{value}' is not a whole number of at least 1")
    return value.strip()


def _choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value.strip() not in choices:
        raise RcbError(f"input '{name}': '{value}' is not one of {', '.join(choices)}")
    return value.strip()


def evaluate_argv(inputs: ActionInputs) -> list[str]:
    """The ``rcb evaluate`` arguments for ``inputs`` (without the leading ``rcb``).

    Raises:
        RcbError: an input is malformed (one line naming it).
    """
    models = split_list(inputs.models)
    if not models:
        raise RcbError("input 'models': give at least one model, e.g. reference or openai/gpt-4o")
    argv = ["evaluate"]
    for model in models:
        argv += ["--model", model]
    argv += ["--samples", _positive_int("samples", inputs.samples or "1")]
    argv += ["--paper", _choice("paper", inputs.paper or "with", _PAPER)]
    argv += ["--sandbox", _choice("sandbox", inputs.sandbox or "local", _SANDBOX)]
    if inputs.tasks.strip():
        argv += ["--tasks", ",".join(split_list(inputs.tasks))]
    if inputs.shard.strip():
        if not re.fullmatch(r"\d+/\d+", inputs.shard.strip()):
            raise RcbError(f"input 'shard': '{inputs.shard}' is not I/N, e.g. 2/4")
        argv += ["--shard", inputs.shard.strip()]
    if inputs.fail_under.strip():
        try:
            float(inputs.fail_under)
        except ValueError:
            raise RcbError(f"input 'fail-under': '{inputs.fail_under}' is not a number") from None
        argv += ["--fail-under", inputs.fail_under.strip()]
    if inputs.workers.strip():
        argv += ["--workers", _positive_int("workers", inputs.workers)]
    if inputs.concurrency.strip():
        argv += ["--concurrency", _positive_int("concurrency", inputs.concurrency)]
    if inputs.max_cost.strip():
        try:
            if float(inputs.max_cost) < 0:
                raise ValueError
        except ValueError:
            raise RcbError(
                f"input 'max-cost': '{inputs.max_cost}' is not a number of dollars, 0 or more"
            ) from None
        argv += ["--max-cost", inputs.max_cost.strip()]
    if inputs.tasks_dir.strip():
        argv += ["--tasks-dir", inputs.tasks_dir.strip()]
    for registry in split_list(inputs.registry):
        argv += ["--registry", registry]
    argv += ["--out", inputs.results_dir or "rcb-results", "--no-progress"]
    return argv


def result_names(models: Sequence[str]) -> list[str]:
    """The names results are recorded under (a replay file may name its model)."""
    from rcb_action.models import ReplayModel

    names = []
    for spec in models:
        if spec.startswith("replay:"):
            names.append(ReplayModel(Path(spec.removeprefix("replay:"))).name)
        else:
            names.append(spec)
    return names


def error_annotation(message: str) -> str:
    """An ``::error`` line for a one-line rcb error, located when it names a file."""
    from rcb_action.validate._validate import problem_from_error

    problem = problem_from_error(message)
    if problem.path and Path(problem.path).exists():
        return annotation(
            "error", problem.message, file=problem.path, line=problem.line, title="rcb"
        )
    return annotation("error", message, title="rcb")


def run_evaluate(inputs: ActionInputs) -> EvaluateOutcome:
    """Run ``rcb evaluate`` for the Action's inputs, then write the report next to the results.

    Usage and input errors (exit 2) print one line and an ``::error`` annotation
    that points at the file to fix when there is one.
    """
    from rcb_action.cli import build_parser
    from rcb_action.models import load_registry
    from rcb_action.report import build_report, render_markdown
    from rcb_action.results import ResultStore

    try:
        argv = evaluate_argv(inputs)
        models = split_list(inputs.models)
        names = result_names(models)
    except RcbError as exc:
        print(f"rcb: error: {exc}", file=sys.stderr)
        print(error_annotation(str(exc)))
        return EvaluateOutcome(exit_code=2, argv=[])
    print(f"rcb: running: rcb {shlex.join(argv)}", file=sys.stderr, flush=True)
    args = build_parser().parse_args(argv)
    try:
        code = int(args.handler(args) or 0)
    except RcbError as exc:
        print(f"rcb: error: {exc}", file=sys.stderr)
        print(error_annotation(str(exc)))
        return EvaluateOutcome(exit_code=2, argv=argv, models=names)
    except KeyboardInterrupt:
        return EvaluateOutcome(exit_code=130, argv=argv, models=names)
    out = Path(inputs.results_dir or "rcb-results")
    store = ResultStore(out)
    # A shard can hold no attempt at all; its folder is still a results store to merge.
    store.path.touch(exist_ok=True)
    registry_files = [Path(p) for p in split_list(inputs.registry)]
    records = [r for r in store.records() if r.model in names]
    report = build_report(records, load_registry(registry_files), source=str(out))
    report_path = out / REPORT_JSON
    report_path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (out / REPORT_MARKDOWN).write_text(render_markdown(report), encoding="utf-8")
    return EvaluateOutcome(
        exit_code=code, argv=argv, report=report, report_path=report_path, models=names
    )


def headline_score(report: dict[str, Any], models: Sequence[str]) -> str:
    """The first model's scaled pass@1 as text (the Action's ``scaled-pass-rate``)."""
    for name in models:
        entry = report.get("models", {}).get(name)
        if entry and entry.get("scaled_pass_at_1") is not None:
            return f"{float(entry['scaled_pass_at_1']):.2f}"
    return ""
