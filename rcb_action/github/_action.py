"""The Action's evaluate step: its inputs turned into one evaluation, then a report.

Inputs arrive as strings (empty when not given). They are checked here so that a
bad input is one line naming the input, not an argparse usage dump.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rcb_action.errors import RcbError
from rcb_action.github._plan import split_list
from rcb_action.github._workflow import annotation
from rcb_action.report import Report

if TYPE_CHECKING:
    from rcb_action.runner import EvalConfig

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
    config: EvalConfig | None = None
    report: Report | None = None
    report_path: Path | None = None
    models: list[str] = field(default_factory=list)


def _positive_int(name: str, value: str) -> int:
    if not re.fullmatch(r"\d+", value.strip()) or int(value) < 1:
        raise RcbError(f"input '{name}': '{value}' is not a whole number of at least 1")
    return int(value)


def _choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value.strip() not in choices:
        raise RcbError(f"input '{name}': '{value}' is not one of {', '.join(choices)}")
    return value.strip()


def evaluate_config(inputs: ActionInputs) -> EvalConfig:
    """The evaluation the Action's inputs ask for, as typed options (the same defaults
    as ``rcb evaluate``).

    Raises:
        RcbError: an input is malformed (one line naming it).
    """
    from rcb_action.runner import DEFAULT_CONCURRENCY, EvalConfig, default_workers, parse_shard

    models = split_list(inputs.models)
    if not models:
        raise RcbError("input 'models': give at least one model, e.g. reference or openai/gpt-4o")
    shard = None
    if inputs.shard.strip():
        if not re.fullmatch(r"\d+/\d+", inputs.shard.strip()):
            raise RcbError(f"input 'shard': '{inputs.shard}' is not I/N, e.g. 2/4")
        shard = parse_shard(inputs.shard.strip())
    max_cost = None
    if inputs.max_cost.strip():
        try:
            max_cost = float(inputs.max_cost)
            if max_cost < 0:
                raise ValueError
        except ValueError:
            raise RcbError(
                f"input 'max-cost': '{inputs.max_cost}' is not a number of dollars, 0 or more"
            ) from None
    paper = _choice("paper", inputs.paper or "with", _PAPER)
    return EvalConfig(
        models=models,
        out=Path(inputs.results_dir or "rcb-results"),
        tasks_dir=Path(inputs.tasks_dir.strip()) if inputs.tasks_dir.strip() else None,
        tasks=",".join(split_list(inputs.tasks)) or None,
        samples=_positive_int("samples", inputs.samples or "1"),
        paper=paper,  # type: ignore[arg-type]  # one of _PAPER, checked above
        workers=(
            _positive_int("workers", inputs.workers)
            if inputs.workers.strip()
            else default_workers()
        ),
        sandbox=_choice("sandbox", inputs.sandbox or "local", _SANDBOX),
        shard=shard,
        registry_files=[Path(p) for p in split_list(inputs.registry)],
        progress=False,
        concurrency=(
            _positive_int("concurrency", inputs.concurrency)
            if inputs.concurrency.strip()
            else DEFAULT_CONCURRENCY
        ),
        max_cost_usd=max_cost,
    )


def fail_under(inputs: ActionInputs) -> float | None:
    """The ``fail-under`` input as points, or None when not given.

    Raises:
        RcbError: it is not a number.
    """
    if not inputs.fail_under.strip():
        return None
    try:
        return float(inputs.fail_under)
    except ValueError:
        raise RcbError(f"input 'fail-under': '{inputs.fail_under}' is not a number") from None


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
    """Run the evaluation the Action's inputs ask for (:func:`rcb_action.runner.run_evaluation`,
    as ``rcb evaluate`` does), then write the report next to the results.

    Usage and input errors (exit 2) print one line and an ``::error`` annotation
    that points at the file to fix when there is one.
    """
    from rcb_action.report import render_markdown
    from rcb_action.results import ResultStore
    from rcb_action.runner import finish_evaluation, run_evaluation

    try:
        config = evaluate_config(inputs)
        threshold = fail_under(inputs)
        names = result_names(config.models)
    except RcbError as exc:
        print(f"rcb: error: {exc}", file=sys.stderr)
        print(error_annotation(str(exc)))
        return EvaluateOutcome(exit_code=2)
    print(
        f"rcb: evaluating {', '.join(config.models)} into {config.out}", file=sys.stderr, flush=True
    )
    try:
        run = run_evaluation(config)
    except RcbError as exc:
        print(f"rcb: error: {exc}", file=sys.stderr)
        print(error_annotation(str(exc)))
        return EvaluateOutcome(exit_code=2, config=config, models=names)
    except KeyboardInterrupt:
        return EvaluateOutcome(exit_code=130, config=config, models=names)
    code = finish_evaluation(run, fail_under=threshold)
    # A shard can hold no attempt at all; its folder is still a results store to merge.
    ResultStore(config.out).path.touch(exist_ok=True)
    report_path = config.out / REPORT_JSON
    report_path.write_text(run.report.to_json(), encoding="utf-8")
    (config.out / REPORT_MARKDOWN).write_text(render_markdown(run.report), encoding="utf-8")
    return EvaluateOutcome(
        exit_code=code, config=config, report=run.report, report_path=report_path, models=names
    )


def headline_score(report: Report, models: Sequence[str]) -> str:
    """The first model's scaled pass@1 as text (the Action's ``scaled-pass-rate``)."""
    for name in models:
        entry = report.models.get(name)
        if entry and entry.scaled_pass_at_1 is not None:
            return f"{entry.scaled_pass_at_1:.2f}"
    return ""
