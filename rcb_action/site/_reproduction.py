"""The reproduction track's results as the site shows them: five dimensions and a stage funnel.

The reproduction track writes ``reproduction.jsonl`` next to ``results.jsonl``, one
JSON object per run. Until that track settles its record, this reader is tolerant:
it needs ``model`` and ``task``; ``dimensions`` maps each dimension to a pass (bool)
or a score in [0, 1]; ``stages`` maps each stage to a bool, a status string
(``pass``/``passed``/``ok``/``success`` pass) or an object with ``passed`` or
``status``. Unknown keys are kept and ignored; a malformed line is skipped with a
warning (a torn last line silently).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

REPRODUCTION_FILE = "reproduction.jsonl"

DIMENSIONS: dict[str, str] = {
    "env_setup": "Environment setup",
    "code_runnability": "Code runnability",
    "method_accuracy": "Method accuracy",
    "experiment_design": "Experiment design",
    "result_consistency": "Result consistency",
}
STAGES: dict[str, str] = {
    "plan": "Plan",
    "env_setup": "Environment setup",
    "code_impl": "Code implementation",
    "train_debug": "Train and debug",
    "result_check": "Result check",
}
_PASSING = {"pass", "passed", "ok", "success", "succeeded", "done"}


class ReproductionRun(BaseModel):
    """One agent run on one reproduction task, as far as the site needs it."""

    model_config = ConfigDict(extra="allow")

    model: str
    task: str
    sample: int = 0
    dimensions: dict[str, bool | float] = {}
    stages: dict[str, Any] = {}
    created_at: str = ""

    def dimension_score(self, name: str) -> float | None:
        value = self.dimensions.get(name)
        if value is None:
            return None
        return max(0.0, min(1.0, float(value)))

    def stage_passed(self, name: str) -> bool:
        value = self.stages.get(name)
        if isinstance(value, dict):
            value = value.get("passed", value.get("status"))
        if isinstance(value, str):
            return value.strip().lower() in _PASSING
        return bool(value)


def read_reproduction(path: Path) -> list[ReproductionRun]:
    """The runs of a ``reproduction.jsonl`` (none when the file is absent); the last
    line for a (model, task, sample) wins."""
    if not path.is_file():
        return []
    runs: dict[tuple[str, str, int], ReproductionRun] = {}
    lines = path.read_bytes().split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            run = ReproductionRun.model_validate_json(raw)
        except ValidationError:
            if number != len(lines):
                print(
                    f"rcb: {path}:{number}: skipping a malformed reproduction run", file=sys.stderr
                )
            continue
        runs[(run.model, run.task, run.sample)] = run
    return list(runs.values())


@dataclass(frozen=True)
class DimensionRow:
    """One model's pass rate (percent) on each dimension, over its runs."""

    model: str
    runs: int
    rates: dict[str, float | None]


@dataclass(frozen=True)
class FunnelStep:
    """Runs that passed this stage and every stage before it."""

    stage: str
    label: str
    runs: int
    share: float


def dimension_table(runs: Sequence[ReproductionRun]) -> list[DimensionRow]:
    by_model: dict[str, list[ReproductionRun]] = defaultdict(list)
    for run in runs:
        by_model[run.model].append(run)
    rows = []
    for model, group in sorted(by_model.items()):
        rates: dict[str, float | None] = {}
        for name in DIMENSIONS:
            scores = [s for s in (r.dimension_score(name) for r in group) if s is not None]
            rates[name] = 100.0 * sum(scores) / len(scores) if scores else None
        rows.append(DimensionRow(model, len(group), rates))
    return rows


def stage_funnel(runs: Sequence[ReproductionRun]) -> list[FunnelStep]:
    steps = []
    alive = list(runs)
    for stage, label in STAGES.items():
        alive = [r for r in alive if r.stage_passed(stage)]
        steps.append(FunnelStep(stage, label, len(alive), 100.0 * len(alive) / max(len(runs), 1)))
    return steps
