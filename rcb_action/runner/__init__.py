"""The evaluation run: plan attempts, run them concurrently, append results, resume."""

from rcb_action.runner._evaluate import (
    EvalConfig,
    EvalSummary,
    WorkItem,
    evaluate,
    in_shard,
    is_done,
    parse_shard,
    plan,
)

__all__ = [
    "EvalConfig",
    "EvalSummary",
    "WorkItem",
    "evaluate",
    "in_shard",
    "is_done",
    "parse_shard",
    "plan",
]
