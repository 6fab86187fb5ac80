"""The reproduction track on the site: five failure rates per model, the stage funnel,
planning against doing, the live subset (papers after each model's cutoff),
suspicious successes and invalid tasks.

The numbers come from :func:`rcb_action.reproduce.reproduction_section`, the same
function ``rcb report`` uses, so the site and the report always agree. Runs are read
from ``reproduction.jsonl`` and each task's gold run from ``repro-gold.jsonl``: a task
whose gold run failed is listed as invalid and never scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcb_action.models import Registry
from rcb_action.report import (
    FunnelStep,
    ModelLiveSubset,
    ReproductionCommon,
    ReproductionSection,
    ReviewItem,
)
from rcb_action.reproduce import (
    DIMENSION_LABELS,
    GOLD_FILE,
    REPRODUCTION_FILE,
    STAGE_LABELS,
    ReproductionRecord,
    baseline_label,
    gold_summary,
    read_reproduction_records,
    reproduction_section,
)

DIMENSIONS: dict[str, str] = dict(DIMENSION_LABELS)
STAGES: dict[str, str] = dict(STAGE_LABELS)
__all__ = ["DIMENSIONS", "GOLD_FILE", "REPRODUCTION_FILE", "STAGES", "ReproductionView"]


def read_reproduction(path: Path) -> list[ReproductionRecord]:
    """The attempts of a ``reproduction.jsonl`` (none when absent; malformed lines skipped)."""
    return read_reproduction_records(path)


def read_gold(directory: Path) -> dict[str, dict[str, Any]]:
    """Each task's gold run in a results folder: valid or not, and why."""
    return {task: dict(info) for task, info in gold_summary(directory).items()}


@dataclass(frozen=True)
class ModelRow:
    """One model's line in the five-dimension table and the planning-against-doing table."""

    model: str
    name: str
    attempts: int
    failure_rates: dict[str, float | None]
    plan_score: float | None
    execution_success: float | None
    gap: float | None
    full_reproduction: float | None
    needs_review: int
    harness_errors: int
    funnel: list[FunnelStep]
    post_cutoff: ModelLiveSubset | None
    # Set for the scripted baselines shown until real models are run: what the agent is.
    baseline: str | None = None


@dataclass(frozen=True)
class ReproductionView:
    """What the reproduction page shows."""

    attempts: int
    models: int
    tasks: int
    rows: list[ModelRow]
    funnel: list[FunnelStep]
    needs_review: list[ReviewItem]
    invalid_tasks: dict[str, dict[str, Any]]
    names: dict[str, str]
    common_post_cutoff: ReproductionCommon | None
    # Each task's targets: "paper" or "gold".
    targets: dict[str, str]


def reproduction_view(
    records: Sequence[ReproductionRecord], gold: Mapping[str, Mapping[str, Any]], registry: Registry
) -> ReproductionView | None:
    """The page's data, or None when there is nothing to show (the empty state)."""
    if not records and not gold:
        return None
    section = ReproductionSection.model_validate(reproduction_section(records, gold, registry))
    rows = [
        ModelRow(
            model=model,
            name=registry.display_name(model),
            attempts=entry.attempts,
            failure_rates=entry.failure_rates,
            plan_score=entry.plan_score,
            execution_success=entry.execution_success,
            gap=entry.plan_execution_gap,
            full_reproduction=entry.full_reproduction,
            needs_review=entry.needs_review,
            harness_errors=entry.harness_errors,
            funnel=entry.funnel,
            post_cutoff=entry.post_cutoff,
            baseline=baseline_label(model),
        )
        for model, entry in section.models.items()
    ]
    scored_tasks = {r.task for r in records if r.scored and r.task not in section.invalid_tasks}
    return ReproductionView(
        attempts=section.attempts,
        models=len(rows),
        tasks=len(scored_tasks),
        rows=rows,
        funnel=section.funnel,
        needs_review=section.needs_review,
        invalid_tasks=section.invalid_tasks,
        names={row.model: row.name for row in rows},
        targets=section.targets,
        common_post_cutoff=section.common_post_cutoff,
    )
