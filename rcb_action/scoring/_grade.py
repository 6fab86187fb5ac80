"""The pass rule: pure functions from what a sandbox run left to a verdict.

Nothing here touches a sandbox, so the rule is tested on plain data and a report
can be re-graded from logs. The run side is :mod:`rcb_action.sandbox` (``run_pytest``,
``run_cases``).

A pytest run passes when pytest exits 0; the signed verdict of the in-sandbox
plugin is intact and reports no tampering; the junit report parses and agrees;
and exactly the expected test ids (those the reference run recorded) ran and
passed. Output text is never searched for words like "failed".
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from rcb_action.sandbox import CasesRaw, PytestRaw
from rcb_action.scoring._classify import (
    FailureClass,
    classify_exception,
    exception_in_output,
    parse_junit,
)

OUTPUT_TAIL = 4000
Status = Literal["pass", "fail", "harness_error"]
# How CaseFailed (rcb_checks.py) names the exception a case raised.
_CASE_FAILED = re.compile(r"CaseFailed: (?:[\w.]+\.)?(\w+):")


class SandboxStartError(RuntimeError):
    """The sandbox never started pytest (no start proof): an infrastructure failure."""


@dataclass
class TestRun:
    """The outcome of one sandboxed run, graded."""

    __test__ = False  # not a pytest test class

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


def started_marker(key: str) -> str:
    """The line the verdict plugin prints when it loads (see rcb_verdict.py)."""
    return f"rcb-verdict: started {hmac.new(key.encode(), b'started', hashlib.sha256).hexdigest()[:16]}"


def _fail(cls: FailureClass, message: str, **kw: Any) -> TestRun:
    return TestRun(status="fail", failure_class=cls, message=message[:500], **kw)


def _check_verdict(text: str, key: str) -> dict[str, Any] | None:
    try:
        wrapper = json.loads(text)
        body = wrapper["body"]
        mac = wrapper["mac"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return None
    if not isinstance(body, str) or not isinstance(mac, str):
        return None
    good = hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(good, mac):
        return None
    parsed = json.loads(body)
    return parsed if isinstance(parsed, dict) else None


def _killed(result_code: int | None, duration_s: float, timeout_s: float) -> FailureClass:
    signal_no = -(result_code or 0)
    return "timeout" if signal_no in (9, 24) and duration_s >= timeout_s else "runtime_other"


def grade_pytest(raw: PytestRaw, *, expected: list[str] | None, timeout_s: float) -> TestRun:
    """The verdict of a pytest run.

    Args:
        raw: what :func:`rcb_action.sandbox.run_pytest` brought back.
        expected: the test ids the reference recorded; ``None`` for the reference
            run itself, which then defines them (every test that ran must pass).
        timeout_s: the limit the run had, to tell a timeout from another kill.

    Raises:
        SandboxStartError: the sandbox never started pytest.
    """
    result = raw.result
    common: dict[str, Any] = {
        "returncode": result.returncode,
        "duration_s": result.duration_s,
        "stdout": result.stdout[-OUTPUT_TAIL:],
        "stderr": result.stderr[-OUTPUT_TAIL:],
        "junit": raw.junit or "",
        "tests_expected": len(expected) if expected is not None else 0,
    }
    if raw.verdict is None and not raw.unsafe and started_marker(raw.key) not in result.stderr:
        raise SandboxStartError(
            f"the sandbox did not start pytest (exit {result.returncode}): {result.stderr.strip()[-300:]}"
        )
    if raw.unsafe:
        return _fail(
            "sandbox_violation", f"an output file was tampered with: {raw.unsafe}", **common
        )
    # A process killed for memory decides the class even when the run then timed out.
    if result.oom_killed:
        return _fail("memory", "killed for exceeding the memory limit", **common)
    if result.timed_out:
        return _fail("timeout", f"the run went past the {timeout_s:.0f} s limit", **common)
    if raw.verdict is None:
        if result.returncode == 0:
            return _fail(
                "sandbox_violation", "pytest exited 0 but wrote no verdict (exit faked?)", **common
            )
        if result.returncode is not None and result.returncode < 0:
            return _fail(
                _killed(result.returncode, result.duration_s, timeout_s),
                f"killed by signal {-result.returncode}",
                **common,
            )
        exception = exception_in_output(result.stdout + "\n" + result.stderr)
        return _fail(classify_exception(exception), f"no verdict; last error {exception}", **common)
    verdict = _check_verdict(raw.verdict, raw.key)
    if verdict is None:
        return _fail("sandbox_violation", "the verdict's signature does not check out", **common)
    if verdict.get("tampered"):
        return _fail(
            "sandbox_violation",
            f"pytest internals replaced: {', '.join(map(str, verdict['tampered']))}",
            **common,
        )
    outcomes: dict[str, str] = verdict.get("results") or {}
    common["outcomes"] = outcomes
    ran = [nodeid for nodeid, outcome in outcomes.items() if outcome != "skipped"]
    passed = [nodeid for nodeid, outcome in outcomes.items() if outcome == "passed"]
    common["tests_ran"] = len(ran)
    common["tests_passed"] = len(passed)
    if raw.junit is None:
        return _fail("sandbox_violation", "the junit report is missing", **common)
    try:
        cases = parse_junit(raw.junit)
    except ValueError as exc:
        return _fail("sandbox_violation", str(exc), **common)
    junit_outcomes = {case.nodeid: case.outcome for case in cases}
    wanted = list(expected) if expected is not None else passed
    all_passed = (
        result.returncode == 0
        and verdict.get("exitstatus") == 0
        and not verdict.get("collect_errors")
        and bool(wanted)
        and sorted(ran) == sorted(wanted)
        and all(outcomes.get(t) == "passed" for t in wanted)
    )
    if all_passed:
        # Both records of the run must agree: a test missing from the junit report
        # did not pass as far as the report knows.
        disagree = [t for t in wanted if junit_outcomes.get(t) != "passed"]
        if disagree:
            return _fail(
                "sandbox_violation",
                f"the junit report and the verdict disagree on {disagree[0]}",
                **common,
            )
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


def _cases_fields(raw: CasesRaw) -> dict[str, Any]:
    """What a verdict decided on the cases run keeps of it."""
    result = raw.result
    return {
        "returncode": result.returncode,
        "duration_s": result.duration_s,
        "stdout": result.stdout[-OUTPUT_TAIL:],
        "stderr": result.stderr[-OUTPUT_TAIL:],
    }


def grade_cases(raw: CasesRaw, *, timeout_s: float) -> TestRun | None:
    """A verdict when the run of the cases already decides the attempt (it timed out,
    ran out of memory, was killed or wrote no outputs), else None: the checks decide."""
    result = raw.result
    common = _cases_fields(raw)
    if result.oom_killed:
        return _fail("memory", "the cases were killed for exceeding the memory limit", **common)
    if result.timed_out:
        return _fail("timeout", f"the cases ran past the {timeout_s:.0f} s limit", **common)
    if raw.unsafe:
        return _fail("sandbox_violation", f"an output file is not plain: {raw.unsafe}", **common)
    if "outputs.json" not in raw.outputs:
        if result.returncode is not None and result.returncode < 0:
            return _fail(
                _killed(result.returncode, result.duration_s, timeout_s),
                f"the cases were killed by signal {-result.returncode}",
                **common,
            )
        exception = exception_in_output(result.stderr) or _last_exception(result.stderr)
        return _fail(
            classify_exception(exception),
            f"the cases wrote no outputs (exit status {result.returncode}; last error {exception})",
            **common,
        )
    return None


def grade_crash(raw: CasesRaw, read: list[str] | None) -> TestRun | None:
    """A fail when the code under test did not compile, or raised (or gave no value) in a
    case the snippet's checks read (``read``: the cases they read on the reference's run),
    else None: the checks decide. Each check that reads such a case would only find it
    failed, so the check sandbox is not started for it. None too when which cases the
    checks read is not known (``read`` is None).

    ``outputs.json`` is written in the process that ran the model's code, so what it
    says is only ever believed to fail an attempt, never to pass one: an answer that
    hides its crash there is graded by the checks as any other."""
    if read is None or "outputs.json" not in raw.outputs:
        return None
    try:
        data = json.loads(raw.outputs["outputs.json"])
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), dict):
        return None
    common = _cases_fields(raw)
    error = data.get("compile_error")
    if isinstance(error, dict):
        kind = str(error.get("type", "SyntaxError"))
        message = f"the code does not compile: {kind}: {error.get('message', '')}"
        return _fail(classify_exception(kind), message, **common)
    listed = data.get("modules")
    modules: dict[str, Any] = listed if isinstance(listed, dict) else {}
    for name in read:
        entry = data["cases"].get(name)
        if isinstance(entry, dict) and "error" not in entry:
            continue
        if isinstance(entry, dict):
            error, what = entry["error"], f"case '{name}' raised"
        else:
            failed = [
                (m, i["error"])
                for m, i in sorted(modules.items())
                if isinstance(i, dict) and "error" in i
            ]
            if not failed:
                return None  # no value and no reason: the checks decide
            error, what = failed[0][1], f"importing {failed[0][0]} failed (case '{name}')"
        error = error if isinstance(error, dict) else {}
        kind = str(error.get("type", "Exception"))
        return _fail(
            classify_exception(kind), f"{what}: {kind}: {error.get('message', '')}", **common
        )
    return None


_TRACEBACK_LAST = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Exit))\b", re.M)


def _last_exception(text: str) -> str | None:
    found = _TRACEBACK_LAST.findall(text)
    return found[-1] if found else None


def grade_checks(run: TestRun, cases: CasesRaw) -> TestRun:
    """The checks' verdict on an attempt, with a failure that came from a case (it
    raised, or the code did not compile) classed by the case's own exception."""
    run = replace(
        run,
        duration_s=run.duration_s + cases.result.duration_s,
        stdout=(cases.result.stdout[-OUTPUT_TAIL // 2 :] + run.stdout)[-OUTPUT_TAIL:],
    )
    if run.passed or run.failure_class == "sandbox_violation":
        return run
    match = _CASE_FAILED.search(run.message)
    if match:
        return replace(run, failure_class=classify_exception(match.group(1)))
    return run
