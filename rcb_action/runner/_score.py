"""Score one piece of code for one snippet: splice, compile, run the selected tests."""

from __future__ import annotations

import dataclasses

from rcb_action.sandbox import Sandbox
from rcb_action.scoring import TestRun, harness_reach, run_tests
from rcb_action.splice import splice
from rcb_action.tasks import Task


def score_code(
    sandbox: Sandbox, task: Task, snippet: str, code: str, expected: list[str]
) -> tuple[str, TestRun]:
    """Splice ``code`` in place of ``snippet`` and run that snippet's tests.

    A file that does not compile fails as ``syntax`` without running anything. A pass
    whose code reaches into the harness (:func:`rcb_action.scoring.harness_reach`) is
    not trusted: it fails as ``sandbox_violation``.

    Returns:
        The spliced file and the test run.
    """
    path = task.snippets[snippet].path
    spliced = splice(task, snippet, code)
    try:
        compile(spliced, path, "exec")
    except SyntaxError as exc:
        return spliced, TestRun(
            status="fail",
            failure_class="syntax",
            message=f"{path}:{exc.lineno}: {exc.msg}",
            tests_expected=len(expected),
        )
    run = run_tests(
        sandbox, task, task.tests_for(snippet), overrides={path: spliced}, expected=expected
    )
    reach = harness_reach(code) if run.passed else []
    if reach:
        run = dataclasses.replace(
            run,
            status="fail",
            failure_class="sandbox_violation",
            message=f"passed, but not trusted: the code reaches into {'; '.join(reach)}",
        )
    return spliced, run
