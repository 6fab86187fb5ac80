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
from rcb_action.runner._expected import Expected, expected_ids, selection_key

__all__ = [
    "EvalConfig",
    "EvalSummary",
    "Expected",
    "WorkItem",
    "evaluate",
    "expected_ids",
    "in_shard",
    "is_done",
    "parse_shard",
    "plan",
    "selection_key",
]
