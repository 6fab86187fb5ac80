"""Run a task's tests in a sandbox and decide pass or fail.

The pass rule: pytest exits 0; the signed verdict of the in-sandbox plugin is
intact and reports no tampering; the junit report parses; every expected test id
(the ids the reference run recorded for this selection) ran and passed, and no
other test ran. Output text is never searched for words like "failed".
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rcb_action.sandbox import Sandbox, UnsafeFileError
from rcb_action.scoring._classify import (
    FailureClass,
    classify_exception,
    exception_in_output,
    parse_junit,
)
from rcb_action.tasks import Task

PLUGIN_SOURCE = Path(__file__).with_name("rcb_verdict.py")
HARNESS_DIR = ".rcb"
OUTPUT_TAIL = 4000
_THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
# No bytecode caches in an attempt's folder: nothing another process could swap in.
_NO_PYC = {"PYTHONDONTWRITEBYTECODE": "1"}

Status = Literal["pass", "fail", "harness_error"]


class SandboxStartError(RuntimeError):
    """The sandbox never started pytest (no start proof): an infrastructure failure."""


def started_marker(key: str) -> str:
    """The line the verdict plugin prints when it loads (see rcb_verdict.py)."""
    return f"rcb-verdict: started {hmac.new(key.encode(), b'started', hashlib.sha256).hexdigest()[:16]}"


@dataclass
class TestRun:
    """The outcome of one sandboxed pytest run."""

    status: Status
    failure_class: FailureClass | None = None
    message: str = ""
    tests_expected: int = 0
    tests_ran: int = 0
    tests_passed: int = 0
    returncode: int | None = None
    duration_s: float = 0.0
    outcomes: dict[str, str] = field(default_factory=dict)
    stdout: str = ""
    stderr: str = ""
    junit: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def task_files(task: Task, overrides: dict[str, str] | None = None) -> dict[str, bytes]:
    """The files a task's tests run against: annotated files with tags stripped,
    ``overrides`` (the spliced target) in place of their originals."""
    files: dict[str, bytes] = {}
    for rel in task.sandbox_files:
        if overrides and rel in overrides:
            files[rel] = overrides[rel].encode("utf-8")
        elif rel in task.files:
            files[rel] = "".join(task.files[rel].stripped()).encode("utf-8")
        else:
            files[rel] = (task.root / rel).read_bytes()
    return files


def _fail(cls: FailureClass, message: str, **kw: object) -> TestRun:
    return TestRun(status="fail", failure_class=cls, message=message[:500], **kw)  # type: ignore[arg-type]


def run_tests(
    sandbox: Sandbox,
    task: Task,
    selection: list[str],
    *,
    overrides: dict[str, str] | None = None,
    expected: list[str] | None = None,
    timeout_s: float | None = None,
) -> TestRun:
    """Run ``selection`` (pytest node ids or paths) against the task's code.

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
    attempt = f"a-{uuid.uuid4().hex[:12]}"
    key = secrets.token_hex(32)
    tag = secrets.token_hex(6)
    verdict_rel = f"{attempt}/verdict-{tag}.json"
    junit_rel = f"{attempt}/junit-{tag}.xml"
    base = f"{sandbox.workspace}/{attempt}"
    sandbox.mkdir(attempt, writable=True)
    files = {f"{attempt}/{rel}": data for rel, data in task_files(task, overrides).items()}
    files[f"{attempt}/{HARNESS_DIR}/rcb_verdict.py"] = PLUGIN_SOURCE.read_bytes()
    try:
        sandbox.write_files(files, writable=False)
        argv = [
            sandbox.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "rcb_verdict",
            f"--junitxml={base}/junit-{tag}.xml", "-o", "junit_family=xunit1",
            "-o", "addopts=", f"--rootdir={base}", *selection,
        ]  # fmt: skip
        env = {
            "PYTHONPATH": f"{base}/{HARNESS_DIR}:{base}/src:{base}",
            "RCB_VERDICT_PATH": f"{base}/verdict-{tag}.json",
            **_THREADS,
            **_NO_PYC,
        }
        result = sandbox.exec(
            argv, timeout_s=timeout, cwd=attempt, env=env, stdin=key.encode() + b"\n"
        )
        verdict_text, verdict_unsafe = _read(sandbox, verdict_rel)
        junit_text, junit_unsafe = _read(sandbox, junit_rel)
    finally:
        sandbox.remove(attempt)
    unsafe = verdict_unsafe or junit_unsafe

    common: dict[str, Any] = {
        "returncode": result.returncode,
        "duration_s": result.duration_s,
        "stdout": result.stdout[-OUTPUT_TAIL:],
        "stderr": result.stderr[-OUTPUT_TAIL:],
        "junit": junit_text or "",
        "tests_expected": len(expected) if expected is not None else 0,
    }
    if verdict_text is None and not unsafe and started_marker(key) not in result.stderr:
        raise SandboxStartError(
            f"the sandbox did not start pytest (exit {result.returncode}): {result.stderr.strip()[-300:]}"
        )
    if unsafe:
        return _fail("sandbox_violation", f"an output file was tampered with: {unsafe}", **common)
    if result.timed_out:
        return _fail("timeout", f"the tests ran past the {timeout:.0f} s limit", **common)
    if result.oom_killed:
        return _fail("memory", "killed for exceeding the memory limit", **common)
    if verdict_text is None:
        if result.returncode == 0:
            return _fail(
                "sandbox_violation", "pytest exited 0 but wrote no verdict (exit faked?)", **common
            )
        if result.returncode is not None and result.returncode < 0:
            signal_no = -result.returncode
            cls: FailureClass = (
                "timeout"
                if signal_no in (9, 24) and result.duration_s >= timeout
                else "runtime_other"
            )
            return _fail(cls, f"killed by signal {signal_no}", **common)
        exception = exception_in_output(result.stdout + "\n" + result.stderr)
        return _fail(classify_exception(exception), f"no verdict; last error {exception}", **common)
    verdict = _check_verdict(verdict_text, key)
    if verdict is None:
        return _fail("sandbox_violation", "the verdict's signature does not check out", **common)
    if verdict["tampered"]:
        return _fail(
            "sandbox_violation",
            f"pytest internals replaced: {', '.join(verdict['tampered'])}",
            **common,
        )
    outcomes: dict[str, str] = verdict["results"]
    common["outcomes"] = outcomes
    ran = [nodeid for nodeid, outcome in outcomes.items() if outcome != "skipped"]
    passed = [nodeid for nodeid, outcome in outcomes.items() if outcome == "passed"]
    common["tests_ran"] = len(ran)
    common["tests_passed"] = len(passed)
    if junit_text is None:
        return _fail("sandbox_violation", "the junit report is missing", **common)
    try:
        cases = parse_junit(junit_text)
    except ValueError as exc:
        return _fail("sandbox_violation", str(exc), **common)
    junit_outcomes = {case.nodeid: case.outcome for case in cases}
    wanted = list(expected) if expected is not None else passed
    all_passed = (
        result.returncode == 0
        and verdict["exitstatus"] == 0
        and not verdict["collect_errors"]
        and bool(wanted)
        and sorted(ran) == sorted(wanted)
        and all(outcomes.get(t) == "passed" for t in wanted)
    )
    if all_passed:
        if any(junit_outcomes.get(t, "passed") != "passed" for t in wanted):
            return _fail("sandbox_violation", "the junit report and the verdict disagree", **common)
        return TestRun(status="pass", message="", **common)
    failing = [case for case in cases if case.outcome in ("failed", "error")]
    if failing:
        first = failing[0]
        return _fail(
            classify_exception(first.exception), f"{first.nodeid}: {first.message}", **common
        )
    if expected is not None and sorted(ran) != sorted(wanted):
        missing = sorted(set(wanted) - set(ran))
        return _fail(
            "runtime_other",
            f"{len(ran)} tests ran, the reference ran {len(wanted)}; missing: {', '.join(missing[:3])}",
            **common,
        )
    exception = exception_in_output(result.stdout + "\n" + result.stderr)
    return _fail(classify_exception(exception), f"pytest exit status {result.returncode}", **common)


def _read(sandbox: Sandbox, rel: str) -> tuple[str | None, str | None]:
    """(the file's text or None when missing, what is wrong with it when it is not a plain file)."""
    try:
        return sandbox.read_file(rel).decode("utf-8", "replace"), None
    except FileNotFoundError:
        return None, None
    except UnsafeFileError as exc:
        return None, str(exc)


def _check_verdict(text: str, key: str) -> dict[str, Any] | None:
    try:
        wrapper = json.loads(text)
        body = wrapper["body"]
        mac = wrapper["mac"]
    except (ValueError, KeyError, TypeError):
        return None
    good = hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()
    if not isinstance(mac, str) or not hmac.compare_digest(good, mac):
        return None
    parsed = json.loads(body)
    return parsed if isinstance(parsed, dict) else None
