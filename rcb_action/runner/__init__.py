"""The evaluation run: plan attempts, run them concurrently, append results, resume."""

from rcb_action.runner._estimate import ModelEstimate, estimate, format_estimates
from rcb_action.runner._evaluate import (
    EvalConfig,
    EvalSummary,
    WorkItem,
    evaluate,
    in_shard,
    is_done,
    parse_shard,
    plan,
    prepare,
)
from rcb_action.runner._run import Evaluation, run_evaluation, timing_line

__all__ = [
    "EvalConfig",
    "EvalSummary",
    "Evaluation",
    "ModelEstimate",
    "WorkItem",
    "estimate",
    "evaluate",
    "format_estimates",
    "in_shard",
    "is_done",
    "parse_shard",
    "plan",
    "prepare",
    "run_evaluation",
    "timing_line",
]
