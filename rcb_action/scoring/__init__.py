"""Scoring: grade answers (two sandboxes for cases and checks), decide pass or fail,
classify failures, compute metrics.

The run side lives in :mod:`rcb_action.sandbox` (``run_pytest``, ``run_cases``); the
pass rule here is pure functions over what those runs return (``grade_pytest``,
``grade_cases``, ``grade_checks``). ``score_snippet`` and ``reference_run`` are
what the runner, validation, mutation testing and agent mode call.
"""

from rcb_action.scoring._attempt import (
    Expected,
    Sandboxes,
    Scored,
    open_sandboxes,
    reference_run,
    reference_seconds,
    release_sandboxes,
    run_visible,
    score_snippet,
    selection_key,
)
from rcb_action.scoring._classify import (
    FAILURE_CLASSES,
    FailureClass,
    JunitCase,
    classify_exception,
    parse_junit,
)
from rcb_action.scoring._grade import (
    SandboxStartError,
    TestRun,
    grade_cases,
    grade_checks,
    grade_crash,
    grade_pytest,
    started_marker,
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
from rcb_action.scoring._run import plugin_source, run_tests, task_files

__all__ = [
    "FAILURE_CLASSES",
    "Expected",
    "FailureClass",
    "JunitCase",
    "Outcome",
    "SandboxStartError",
    "Sandboxes",
    "Scored",
    "TestRun",
    "bootstrap_ci",
    "classify_exception",
    "grade_cases",
    "grade_checks",
    "grade_crash",
    "grade_pytest",
    "harness_reach",
    "macro_task_mean",
    "open_sandboxes",
    "paired_bootstrap",
    "parse_junit",
    "pass_at_k",
    "pass_rate",
    "per_task",
    "plugin_source",
    "reference_run",
    "reference_seconds",
    "release_sandboxes",
    "run_tests",
    "run_visible",
    "scaled_pass_at_1",
    "score_snippet",
    "selection_key",
    "started_marker",
    "task_files",
    "unbiased_pass_at_k",
]
