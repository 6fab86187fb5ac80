"""Reproduction records: ``OUT/reproduction.jsonl``, one line per attempt, append-only.

The store is the results store's (written, flushed and fsynced per record; a torn
last line is repaired on open); a rerun appends, and the newest line for a
(task, model, sample) wins. Gold runs go to ``OUT/repro-gold.jsonl`` in the same form.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rcb_action.results import JsonlStore, read_jsonl

REPRODUCTION_FILE = "reproduction.jsonl"
GOLD_FILE = "repro-gold.jsonl"
LOGS_DIR = "repro-logs"

STAGES = ("plan", "env_setup", "code_impl", "train_debug", "result_check")
DIMENSIONS = (
    "env_setup",
    "code_runnability",
    "method_accuracy",
    "experiment_design",
    "result_consistency",
)
# The two dimensions the judge grades (the others come from the stages).
JUDGED_DIMENSIONS = ("method_accuracy", "experiment_design")
StageStatus = Literal["passed", "failed", "not_run"]
ReproKey = tuple[str, str, int]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class StageRecord(_Open):
    """One stage of one attempt: its outcome, its time, and where its log is.

    ``duration_s`` is the model's time on the stage (``agent_s``) plus the harness's
    check (``check_s``); ``log`` is relative to the results folder.
    """

    stage: str
    status: StageStatus
    success: bool
    started_at: str = ""
    duration_s: float = 0.0
    agent_s: float = 0.0
    check_s: float = 0.0
    error: str | None = None
    log: str | None = None


class MetricCheck(_Open):
    """A reproduced metric against the published one (mean +- 2 std)."""

    name: str
    reproduced: list[float] = []
    mean: float | None = None
    std: float | None = None
    published_mean: float
    published_std: float
    low: float
    high: float
    in_range: bool
    relative_error: float | None = None
    relative_error_signal: bool = False
    higher_is_better: bool
    direction: Literal["better", "worse"] | None = None
    error: str | None = None


class CurveCheck(_Open):
    """A curve fact checked on the reproduced curve."""

    curve: str
    kind: str
    description: str = ""
    passed: bool
    detail: str = ""


class JudgeItem(_Open):
    """The judge's grade of one rubric item, for the plan alone and for the code."""

    id: str
    dimension: str
    weight: float
    plan: float
    implementation: float
    reason: str = ""


class JudgeRecord(_Open):
    """What the judge was asked and answered: enough to audit the grade."""

    model: str
    prompt_sha: str = ""
    prompt_log: str | None = None
    answer_log: str | None = None
    answer: str = ""
    items: list[JudgeItem] = []
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0


class ReproductionRecord(_Open):
    """One agent attempt at one reproduction task.

    ``status`` is ``scored`` or ``harness_error`` (infrastructure: a provider that
    never answered, a sandbox that failed; never counted against the model).
    ``dimensions`` holds the five dimensions as pass (true) or fail (false); the two
    judged ones are absent when no judge graded the attempt. ``failed_stage`` is the
    first stage that failed, the cause of everything after it.
    """

    task: str
    model: str
    sample: int = 0
    task_sha: str
    published: dt.date
    domain: str = ""
    status: Literal["scored", "harness_error"]
    message: str = ""
    failed_stage: str | None = None
    stages: dict[str, StageRecord] = {}
    dimensions: dict[str, bool] = {}
    scores: dict[str, float | None] = {}
    metrics: dict[str, MetricCheck] = {}
    curves: list[CurveCheck] = []
    needs_review: bool = False
    review_reasons: list[str] = []
    # Where the graded targets come from: the paper's own numbers, or rcb's gold run.
    target_source: str = ""
    # sha256 of the paper's text the agent and the judge read (the paper pipeline's);
    # None when a scripted agent ran without it.
    paper_sha: str | None = None
    # The harness's reruns: each one's seed and wall time; the leakage rerun (the first
    # seed again, the held-out split's data replaced; never graded) last, with swap: 1.
    reruns: list[dict[str, float]] = []
    judge: JudgeRecord | None = None
    usage: dict[str, int | float] = {}
    budget: dict[str, int | float] = {}
    budget_exhausted: str | None = None
    log_dir: str | None = None
    created_at: str = ""
    rcb_version: str = ""

    @property
    def key(self) -> ReproKey:
        return (self.task, self.model, self.sample)

    @property
    def scored(self) -> bool:
        return self.status == "scored"

    def stage_passed(self, stage: str) -> bool:
        record = self.stages.get(stage)
        return record is not None and record.success


def read_reproduction_records(path: Path) -> list[ReproductionRecord]:
    """Every well-formed record of a reproduction file, in file order (none when absent);
    a torn last line is ignored, other malformed lines are reported and skipped."""
    return read_jsonl(path, ReproductionRecord, "reproduction record")


def latest(records: list[ReproductionRecord]) -> dict[ReproKey, ReproductionRecord]:
    """The newest record for each (task, model, sample)."""
    return {record.key: record for record in records}


class ReproductionStore(JsonlStore[ReproductionRecord]):
    """``DIR/reproduction.jsonl`` (or ``DIR/repro-gold.jsonl``) with the results store's
    guarantees: one record a line, each written, flushed and fsynced on its own."""

    model = ReproductionRecord
    file_name = REPRODUCTION_FILE
    what = "reproduction record"

    def latest(self) -> dict[ReproKey, ReproductionRecord]:
        return latest(self.records())
