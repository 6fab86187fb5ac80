"""Run a task's pytest selection in one sandbox, in process with the code under test.

This is how tasks with in-process tests are graded (and how the check sandbox runs
the checks, which import no code of the model's). An in-process verdict can be
forged by the code under test; such tasks are labelled so in every report.
"""

from __future__ import annotations

from pathlib import Path

from rcb_action.sandbox import Sandbox, run_pytest
from rcb_action.scoring._grade import TestRun, grade_pytest
from rcb_action.tasks import Task

PLUGIN_DIR = Path(__file__).parent
VERDICT_PLUGIN = "rcb_verdict"


def plugin_source(name: str) -> bytes:
    """The source of one of rcb's in-sandbox programs (``rcb_verdict``, ``rcb_cases``, ``rcb_checks``)."""
    return (PLUGIN_DIR / f"{name}.py").read_bytes()


def task_files(
    task: Task, overrides: dict[str, str] | None = None, *, only: list[str] | None = None
) -> dict[str, bytes]:
    """The files of a task that enter a sandbox: annotated files with their tags
    stripped, ``overrides`` (the spliced target) in place of their originals.

    Args:
        task: the task.
        overrides: replacement text by relative path.
        only: these relative paths (default: the task's ``sandbox_files``).
    """
    files: dict[str, bytes] = {}
    for rel in task.sandbox_files if only is None else only:
        if overrides and rel in overrides:
            files[rel] = overrides[rel].encode("utf-8", "replace")
        elif rel in task.files:
            files[rel] = "".join(task.files[rel].stripped()).encode("utf-8")
        else:
            files[rel] = task.read_bytes(rel)
    return files


def run_tests(
    sandbox: Sandbox,
    task: Task,
    selection: list[str],
    *,
    overrides: dict[str, str] | None = None,
    expected: list[str] | None = None,
    timeout_s: float | None = None,
) -> TestRun:
    """Run ``selection`` (pytest node ids or paths) against the task's code, in process.

    Args:
        sandbox: an open sandbox for ``task``.
        task: the task.
        selection: what pytest runs.
        overrides: replacement file contents by relative path (the spliced file).
        expected: the test ids the reference recorded; ``None`` for the reference
            run itself, which then defines them.
        timeout_s: wall-clock limit; the task's ``timeout_s`` by default.

    Raises:
        SandboxStartError: the sandbox never started pytest.
        Exception: whatever the sandbox raises when it cannot run at all; the
            caller retries, then records ``harness_error``.
    """
    timeout = float(timeout_s or task.config.timeout_s)
    raw = run_pytest(
        sandbox,
        task_files(task, overrides),
        selection,
        plugins={VERDICT_PLUGIN: plugin_source(VERDICT_PLUGIN)},
        timeout_s=timeout,
    )
    return grade_pytest(raw, expected=expected, timeout_s=timeout)
