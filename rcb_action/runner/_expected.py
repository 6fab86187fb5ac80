"""The reference run: which test ids each snippet's selection runs when the code is right.

A candidate passes a snippet only if exactly these tests ran and passed, so a
candidate that makes tests vanish (skips, collection tricks) cannot pass. The
result is cached per task hash under ``$RCB_CACHE_DIR/expected``.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

from rcb_action.paths import cache_dir
from rcb_action.sandbox import Sandbox
from rcb_action.scoring import TestRun, run_tests
from rcb_action.tasks import Task


@dataclass
class Expected:
    """Per selection: the ids the reference passed, or why the reference run failed."""

    ids: dict[str, list[str]]
    errors: dict[str, str]
    seconds: float


def selection_key(selection: list[str]) -> str:
    return "\0".join(selection)


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(task: Task) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(task.id, threading.Lock())


def expected_ids(task: Task, sandbox: Sandbox) -> Expected:
    """Run the reference once per distinct selection of ``task`` (cached by task hash)."""
    path = cache_dir("expected") / f"{task.id}-{task.sha}.json"
    with _lock_for(task):
        if path.is_file():
            data = json.loads(path.read_text())
            return Expected(
                ids=data["ids"], errors=data["errors"], seconds=data.get("seconds", 0.0)
            )
        ids: dict[str, list[str]] = {}
        errors: dict[str, str] = {}
        seconds = 0.0
        selections = {
            selection_key(task.tests_for(name)): task.tests_for(name)
            for name in task.snippet_names()
        }
        for key, selection in selections.items():
            run: TestRun = run_tests(sandbox, task, selection)
            seconds += run.duration_s
            if run.passed:
                ids[key] = sorted(run.outcomes)
            else:
                errors[key] = f"{run.failure_class}: {run.message}"
        if not errors:
            path.write_text(
                json.dumps({"ids": ids, "errors": errors, "seconds": seconds}, indent=1)
            )
        return Expected(ids=ids, errors=errors, seconds=seconds)
