"""The report's reproduction section, as plain data (``rcb report --json`` and the site).

Per model: the failure rate on each of the five dimensions, the stage funnel,
the plan score beside execution success (the gap between planning and doing),
and the attempts flagged for review. Harness errors are counted apart and never
scored; tasks whose gold run failed are listed and never scored either. Given the
models registry, the live subset too: each model on the tasks whose papers came out
after its knowledge cutoff, and every model on the tasks after all their cutoffs.
"""

from __future__ import annotations

import datetime as dt
import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from rcb_action.models import Registry
from rcb_action.report import post_cutoff
from rcb_action.reproduce._records import (
    DIMENSIONS,
    JUDGED_DIMENSIONS,
    STAGES,
    ReproductionRecord,
)

DIMENSION_LABELS = {
    "env_setup": "Environment setup",
    "code_runnability": "Code runnability",
    "method_accuracy": "Method accuracy",
    "experiment_design": "Experiment design",
    "result_consistency": "Result consistency",
}
STAGE_LABELS = {
    "plan": "Plan",
    "env_setup": "Environment setup",
    "code_impl": "Code implementation",
    "train_debug": "Train and debug",
    "result_check": "Result check",
}


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def stage_funnel(records: Sequence[ReproductionRecord]) -> list[dict[str, Any]]:
    """For each stage, the attempts that passed it and every stage before it (the
    cumulative funnel), and beside it the conditional rate: of the attempts that
    reached the stage (passed every one before it), the share that failed it. A stage
    nobody reached has no conditional rate, never a failure."""
    steps = []
    alive = list(records)
    for stage in STAGES:
        reached = len(alive)
        alive = [r for r in alive if r.stage_passed(stage)]
        steps.append(
            {
                "stage": stage,
                "label": STAGE_LABELS[stage],
                "passed": len(alive),
                "share": _pct(len(alive), len(records)),
                "reached": reached,
                "failed_when_reached": _pct(reached - len(alive), reached),
            }
        )
    return steps


def is_full_reproduction(record: ReproductionRecord) -> bool:
    """Every stage passed (the reruns' numbers in range, nothing flagged) and the judge
    passed both dimensions it grades: numbers alone never make a reproduction."""
    return record.failed_stage is None and all(
        record.dimensions.get(d) is True for d in JUDGED_DIMENSIONS
    )


def _full_reproduction(scored: list[ReproductionRecord]) -> float | None:
    """Percent of attempts that are full reproductions; None when no judge graded any
    (then nobody can say whether the method was the paper's)."""
    if not any(d in r.dimensions for r in scored for d in JUDGED_DIMENSIONS):
        return None
    return _pct(sum(1 for r in scored if is_full_reproduction(r)), len(scored))


def _model_entry(records: list[ReproductionRecord]) -> dict[str, Any]:
    scored = [r for r in records if r.scored]
    rates: dict[str, float | None] = {}
    graded: dict[str, int] = {}
    for name in DIMENSIONS:
        values = [r.dimensions[name] for r in scored if name in r.dimensions]
        graded[name] = len(values)
        rates[name] = _pct(sum(1 for v in values if not v), len(values))
    plans = [r.scores["plan"] for r in scored if r.scores.get("plan") is not None]
    plan_score = round(100.0 * statistics.fmean(plans), 2) if plans else None  # type: ignore[arg-type]
    execution = _pct(sum(1 for r in scored if r.stage_passed("train_debug")), len(scored))
    return {
        "attempts": len(scored),
        "tasks": len({r.task for r in scored}),
        "harness_errors": len(records) - len(scored),
        "failure_rates": rates,
        "graded": graded,
        "funnel": stage_funnel(scored),
        "failed_stages": dict(
            sorted(Counter(r.failed_stage for r in scored if r.failed_stage).items())
        ),
        "plan_score": plan_score,
        "execution_success": execution,
        "full_reproduction": _full_reproduction(scored),
        "plan_execution_gap": (
            round(plan_score - execution, 2)
            if plan_score is not None and execution is not None
            else None
        ),
        "needs_review": sum(1 for r in scored if r.needs_review),
        "cost_usd": round(sum(float(r.usage.get("cost_usd", 0.0)) for r in records), 6),
        "turns": sum(int(r.usage.get("turns", 0)) for r in records),
    }


def _live(records: Sequence[ReproductionRecord]) -> dict[str, Any]:
    """The live-subset summary of one model's attempts."""
    entry = _model_entry(list(records))
    return {
        "attempts": entry["attempts"],
        "tasks": sorted({r.task for r in records if r.scored}),
        "failure_rates": entry["failure_rates"],
        "full_reproduction": entry["full_reproduction"],
    }


def _post_cutoff(
    by_model: Mapping[str, list[ReproductionRecord]], registry: Registry
) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """Each model's attempts on papers after its cutoff, and the subset after every cutoff."""
    per_model: dict[str, dict[str, Any]] = {}
    cutoffs: dict[str, dt.date | None] = {}
    for name, recs in by_model.items():
        cutoff = cutoffs[name] = registry.cutoff(name)
        per_model[name] = {
            "cutoff": cutoff.isoformat() if cutoff else None,
            "note": None if cutoff else "no knowledge cutoff known: every task counts",
            **_live(post_cutoff(recs, cutoff)),
        }
    known = [c for c in cutoffs.values() if c is not None]
    if not known:
        return per_model, None
    after = max(known)
    later = {name: post_cutoff(recs, after) for name, recs in by_model.items()}
    common = {
        "after": after.isoformat(),
        "models": {name: _live(recs) for name, recs in later.items()},
        "tasks": sorted({r.task for recs in later.values() for r in recs}),
        "models_without_cutoff": sorted(n for n, c in cutoffs.items() if c is None),
    }
    return per_model, common


def reproduction_section(
    records: Sequence[ReproductionRecord],
    gold: Mapping[str, Mapping[str, Any]] | None = None,
    registry: Registry | None = None,
) -> dict[str, Any]:
    """The reproduction section of the report.

    Args:
        records: attempts (several lines for one (task, model, sample): the last wins).
        gold: each task's gold run summary (``rcb_action.reproduce.gold_summary``).
        registry: the models registry; with it, each model gets ``post_cutoff`` (its
            attempts on papers first posted after its knowledge cutoff) and the
            section gets ``common_post_cutoff`` (papers after every known cutoff).

    Returns:
        ``{"models": {model: {...}}, "funnel": [...], "dimensions": {...},
        "stages": {...}, "needs_review": [...], "invalid_tasks": {...}, "attempts": n}``,
        where each model has ``failure_rates`` (percent of graded attempts failing
        each dimension; None when none was graded), ``funnel``, ``plan_score`` and
        ``execution_success`` (percent), ``plan_execution_gap`` (points),
        ``full_reproduction``, ``failed_stages``, ``needs_review``, ``harness_errors``.
    """
    latest = {r.key: r for r in records}
    invalid = {task: dict(info) for task, info in (gold or {}).items() if not info.get("valid")}
    kept = [r for r in latest.values() if r.task not in invalid]
    by_model: dict[str, list[ReproductionRecord]] = defaultdict(list)
    for record in kept:
        by_model[record.model].append(record)
    scored = [r for r in kept if r.scored]
    models = {name: _model_entry(recs) for name, recs in sorted(by_model.items())}
    section: dict[str, Any] = {}
    if registry is not None:
        live, common = _post_cutoff(by_model, registry)
        for name, entry in models.items():
            entry["post_cutoff"] = live[name]
        if common is not None:
            section["common_post_cutoff"] = common
    return {
        **section,
        "attempts": len(scored),
        "dimensions": dict(DIMENSION_LABELS),
        "stages": dict(STAGE_LABELS),
        "models": models,
        "funnel": stage_funnel(scored),
        "needs_review": [
            {
                "task": r.task,
                "model": r.model,
                "sample": r.sample,
                "reasons": r.review_reasons,
                "log_dir": r.log_dir,
            }
            for r in sorted(scored, key=lambda r: r.key)
            if r.needs_review
        ],
        "invalid_tasks": invalid,
        # Each task's targets: "paper" (the paper's numbers) or "gold" (rcb's gold run).
        "targets": {r.task: r.target_source for r in sorted(kept, key=lambda r: r.key)},
    }
