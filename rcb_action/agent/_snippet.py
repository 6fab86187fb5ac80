"""Agent mode for snippets (``rcb evaluate --agent-turns K``): the model sees how its block
does on a visible subset of the snippet's tests and writes it again, up to K times.

The visible subset is the first half (at least one) of the test ids the reference run
recorded for the snippet, in sorted order; the model is shown their outcomes and the
end of pytest's output, never the other tests. The final block is scored by the normal
pass rule on the whole selection, so pass-after-K compares with pass@1.
"""

from __future__ import annotations

import dataclasses
import hashlib

from rcb_action.prompts import Prompt
from rcb_action.sandbox import Sandbox
from rcb_action.scoring import TestRun, parse_junit, run_tests
from rcb_action.splice import splice
from rcb_action.tasks import Task

FEEDBACK_OUTPUT = 3000


def visible_tests(expected: list[str]) -> list[str]:
    """The tests a refining model may run: the first half of the ids, at least one."""
    ids = sorted(expected)
    return ids[: max(1, len(ids) // 2)]


def run_visible(
    sandbox: Sandbox, task: Task, snippet: str, code: str, visible: list[str]
) -> TestRun | str:
    """The visible tests on ``code`` spliced in place of ``snippet``; a string when the
    spliced file does not compile (the message shown to the model)."""
    path = task.snippets[snippet].path
    spliced = splice(task, snippet, code)
    try:
        compile(spliced, path, "exec")
    except SyntaxError as exc:
        return f"{path}:{exc.lineno}: SyntaxError: {exc.msg}"
    return run_tests(sandbox, task, visible, overrides={path: spliced}, expected=visible)


def visible_passed(result: TestRun | str | None) -> bool:
    return isinstance(result, TestRun) and result.passed


def feedback(result: TestRun | str | None, visible: list[str]) -> str:
    """What the model is told about its last block."""
    if result is None:
        return "Your answer held no fenced python code block, so nothing could be run."
    if isinstance(result, str):
        return f"The file with your block does not compile: {result}"
    messages: dict[str, str] = {}
    try:
        for case in parse_junit(result.junit):
            if case.outcome in ("failed", "error"):
                messages[case.nodeid] = case.message
    except ValueError:
        pass
    lines = [
        f"Your block was run against {len(visible)} visible test(s); the other tests are hidden. "
        f"{result.tests_passed} of {len(visible)} passed."
    ]
    for test in visible:
        outcome = result.outcomes.get(test, "did not run")
        detail = f": {messages[test][:300]}" if test in messages else ""
        lines.append(f"- {test}: {outcome}{detail}")
    if result.failure_class:
        lines.append(f"Failure: {result.failure_class}: {result.message[:300]}")
    tail = (result.stdout + result.stderr)[-FEEDBACK_OUTPUT:].strip()
    if tail:
        lines.append(f"\nThe end of pytest's output:\n```\n{tail}\n```")
    return "\n".join(lines)


def refine_prompt(prompt: Prompt, history: list[tuple[str, str]]) -> Prompt:
    """The snippet's prompt followed by each earlier answer and what the visible tests said."""
    parts = [prompt.text, "\n## Your earlier answers and the visible tests\n"]
    for number, (answer, told) in enumerate(history, 1):
        parts.append(
            f"### Answer {number}\n\n{answer.strip()}\n\n### The visible tests on answer {number}\n\n{told}\n"
        )
    parts.append(
        "Write the block again, fixing what the tests show: one ```python block holding only its code.\n"
    )
    text = "\n".join(parts)
    return dataclasses.replace(
        prompt, text=text, sha=hashlib.sha256(text.encode()).hexdigest()[:16]
    )
