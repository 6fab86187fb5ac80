"""Score one piece of code for one snippet: splice, compile, run the selected tests."""

from __future__ import annotations

from rcb_action.sandbox import Sandbox
from rcb_action.scoring import TestRun, run_tests
from rcb_action.splice import splice
from rcb_action.tasks import Task


def score_code(
    sandbox: Sandbox, task: Task, snippet: str, code: str, expected: list[str]
) -> tuple[str, TestRun]:
    """Splice ``code`` in place of ``snippet`` and run that snippet's tests.

    A file that does not compile fails as ``syntax`` without running anything.

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
    return spliced, run
