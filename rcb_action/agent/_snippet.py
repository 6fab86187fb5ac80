"""Agent mode for snippets (``rcb evaluate --agent-turns K``): the model sees how its block
does on the task's visible checks and writes it again, up to K times.

The visible checks are those task.yaml's ``agent`` block names; they run in a check
sandbox that holds no other check and only the visible cases' reference outputs
(:func:`rcb_action.scoring.run_visible`). The model is shown their outcomes and the
end of their output, never the hidden checks. The final block is scored by the
normal pass rule on the whole selection, so pass-after-K compares with pass@1.
"""

from __future__ import annotations

import dataclasses
import hashlib

from rcb_action.prompts import Prompt
from rcb_action.scoring import TestRun, parse_junit

FEEDBACK_OUTPUT = 3000


def visible_passed(result: TestRun | None) -> bool:
    return isinstance(result, TestRun) and result.passed


def feedback(result: TestRun | None, visible: list[str]) -> str:
    """What the model is told about its last block."""
    if result is None:
        return "Your answer held no fenced python code block, so nothing could be run."
    messages: dict[str, str] = {}
    try:
        for case in parse_junit(result.junit):
            if case.outcome in ("failed", "error"):
                messages[case.nodeid] = case.message
    except ValueError:
        pass
    lines = [
        f"Your block was run against {len(visible)} visible check(s); the other checks are hidden. "
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
        lines.append(f"\nThe end of the output:\n```\n{tail}\n```")
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
