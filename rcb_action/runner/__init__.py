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

__all__ = [
    "EvalConfig",
    "EvalSummary",
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
]
