"""The evaluation run: plan attempts, run them concurrently, append results, resume."""

from rcb_action.runner._estimate import ModelEstimate, estimate, format_estimates
from rcb_action.runner._evaluate import (
    DEFAULT_CONCURRENCY,
    EvalConfig,
    EvalSummary,
    WorkItem,
    default_workers,
    evaluate,
    in_lanes,
    in_shard,
    is_done,
    parse_shard,
    plan,
    prepare,
)
from rcb_action.runner._run import Evaluation, finish_evaluation, run_evaluation

__all__ = [
    "DEFAULT_CONCURRENCY",
    "EvalConfig",
    "EvalSummary",
    "Evaluation",
    "ModelEstimate",
    "WorkItem",
    "default_workers",
    "estimate",
    "evaluate",
    "finish_evaluation",
    "format_estimates",
    "in_lanes",
    "in_shard",
    "is_done",
    "parse_shard",
    "plan",
    "prepare",
    "run_evaluation",
]
