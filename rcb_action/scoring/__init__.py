"""Scoring: run the tests in a sandbox, decide pass or fail, classify failures, compute metrics."""

from rcb_action.scoring._classify import (
    FAILURE_CLASSES,
    FailureClass,
    JunitCase,
    classify_exception,
    parse_junit,
)
from rcb_action.scoring._metrics import (
    Outcome,
    bootstrap_ci,
    macro_task_mean,
    paired_bootstrap,
    pass_at_k,
    pass_rate,
    per_task,
    scaled_pass_at_1,
    unbiased_pass_at_k,
)
from rcb_action.scoring._reach import harness_reach
from rcb_action.scoring._run import SandboxStartError, TestRun, run_tests, task_files

__all__ = [
    "FAILURE_CLASSES",
    "FailureClass",
    "JunitCase",
    "Outcome",
    "SandboxStartError",
    "TestRun",
    "bootstrap_ci",
    "classify_exception",
    "harness_reach",
    "macro_task_mean",
    "paired_bootstrap",
    "parse_junit",
    "pass_at_k",
    "pass_rate",
    "per_task",
    "run_tests",
    "scaled_pass_at_1",
    "task_files",
    "unbiased_pass_at_k",
]
