"""The pass rule as pure functions: graded from plain data, no sandbox needed."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from rcb_action.sandbox import CasesRaw, ExecResult, PytestRaw
from rcb_action.scoring import (
    SandboxStartError,
    TestRun,
    grade_cases,
    grade_checks,
    grade_crash,
    grade_pytest,
    started_marker,
)

KEY = "k" * 64
IDS = ["checks/test_x.py::test_a", "checks/test_x.py::test_b"]


def verdict(results: dict[str, str], *, exitstatus: int = 0, key: str = KEY, **extra) -> str:
    body = json.dumps(
        {
            "results": results,
            "collect_errors": [],
            "exitstatus": exitstatus,
            "tampered": [],
            **extra,
        }
    )
    return json.dumps(
        {"body": body, "mac": hmac.new(key.encode(), body.encode(), hashlib.sha256).hexdigest()}
    )


def junit(outcomes: dict[str, str]) -> str:
    cases = []
    for nodeid, outcome in outcomes.items():
        file, name = nodeid.split("::")
        inner = (
            "<failure message=\"rcb_checks.CaseFailed: NameError: case 'x' raised: name 'y' is not defined\">E</failure>"
            if outcome == "failed"
            else ""
        )
        cases.append(
            f'<testcase classname="{file[:-3].replace("/", ".")}" name="{name}" file="{file}">{inner}</testcase>'
        )
    return f"<testsuites><testsuite>{''.join(cases)}</testsuite></testsuites>"


def raw(returncode: int = 0, *, results=None, report=None, **kw) -> PytestRaw:
    results = {i: "passed" for i in IDS} if results is None else results
    result = ExecResult(
        returncode=returncode,
        stdout="",
        stderr=started_marker(KEY) + "\n",
        duration_s=kw.pop("duration_s", 0.5),
        timed_out=kw.pop("timed_out", False),
        oom_killed=kw.pop("oom_killed", False),
    )
    return PytestRaw(
        result=result,
        key=KEY,
        verdict=kw.pop("verdict", verdict(results, exitstatus=returncode)),
        junit=junit(results) if report is None else report,
        **kw,
    )


def test_every_expected_check_passed_is_a_pass():
    assert grade_pytest(raw(), expected=IDS, timeout_s=10).status == "pass"


def test_an_expected_check_missing_from_the_junit_report_fails():
    only_a = junit({IDS[0]: "passed"})
    run = grade_pytest(raw(report=only_a), expected=IDS, timeout_s=10)
    assert run.status == "fail" and run.failure_class == "sandbox_violation"
    assert IDS[1] in run.message


def test_fewer_checks_than_the_reference_ran_fails():
    run = grade_pytest(raw(results={IDS[0]: "passed"}), expected=IDS, timeout_s=10)
    assert run.status == "fail" and "missing" in run.message


def test_a_forged_signature_is_a_violation():
    forged = verdict({i: "passed" for i in IDS}, key="x" * 64)
    run = grade_pytest(raw(verdict=forged), expected=IDS, timeout_s=10)
    assert run.failure_class == "sandbox_violation"


def test_no_start_proof_is_the_harness_s_failure():
    broken = raw(verdict=None)
    broken.result = ExecResult(returncode=1, stdout="", stderr="bwrap: cannot", duration_s=0.1)
    with pytest.raises(SandboxStartError):
        grade_pytest(broken, expected=IDS, timeout_s=10)


def test_a_timeout_and_an_oom_kill_are_the_model_s_failures():
    assert (
        grade_pytest(raw(1, timed_out=True), expected=IDS, timeout_s=10).failure_class == "timeout"
    )
    assert (
        grade_pytest(raw(137, oom_killed=True), expected=IDS, timeout_s=10).failure_class
        == "memory"
    )


def cases_raw(returncode: int | None = 0, outputs=None, **kw) -> CasesRaw:
    result = ExecResult(
        returncode=returncode,
        stdout="",
        stderr=kw.pop("stderr", ""),
        duration_s=kw.pop("duration_s", 0.2),
        timed_out=kw.pop("timed_out", False),
        oom_killed=kw.pop("oom_killed", False),
    )
    return CasesRaw(result=result, outputs={} if outputs is None else outputs, **kw)


def test_cases_with_outputs_leave_the_verdict_to_the_checks():
    assert grade_cases(cases_raw(outputs={"outputs.json": b"{}"}), timeout_s=10) is None


@pytest.mark.parametrize(
    ("case", "failure_class"),
    [
        (dict(timed_out=True, returncode=-9, duration_s=10.0), "timeout"),
        (dict(oom_killed=True, returncode=137), "memory"),
        (dict(returncode=-9, duration_s=10.5), "timeout"),
        (dict(returncode=-11), "runtime_other"),
        (dict(returncode=0), "runtime_other"),  # exited early (os._exit) with no outputs
        (dict(returncode=1, stderr="Traceback...\nRecursionError: maximum depth"), "runtime_other"),
        (dict(returncode=1, stderr="Traceback...\nMemoryError"), "memory"),
        (
            dict(unsafe="outputs.json is a symbolic link", outputs={"outputs.json": b""}),
            "sandbox_violation",
        ),
    ],
)
def test_cases_that_decide_the_attempt(case, failure_class):
    run = grade_cases(cases_raw(**case), timeout_s=10)
    assert isinstance(run, TestRun) and run.status == "fail"
    assert run.failure_class == failure_class


def test_a_check_failing_on_a_case_that_raised_takes_the_case_s_class():
    results = {IDS[0]: "passed", IDS[1]: "failed"}
    run = grade_pytest(raw(1, results=results), expected=IDS, timeout_s=10)
    graded = grade_checks(run, cases_raw(outputs={"outputs.json": b"{}"}))
    assert graded.status == "fail" and graded.failure_class == "name"


def _outputs(**data) -> dict[str, bytes]:
    return {"outputs.json": json.dumps({"cases": {}, "modules": {}, **data}).encode()}


@pytest.mark.parametrize(
    ("data", "failure_class", "says"),
    [
        (dict(cases={"a": {"value": 1}, "b": {"error": {"type": "NameError", "message": "x"}}}),
         "name", "case 'b' raised: NameError: x"),
        (dict(compile_error={"type": "SyntaxError", "message": "line 3"}),
         "syntax", "does not compile"),
        (dict(modules={"cases/c.py": {"error": {"type": "ImportError", "message": "no"}}}),
         "import", "importing cases/c.py failed (case 'a')"),
    ],
)  # fmt: skip
def test_a_crash_in_a_case_the_checks_read_fails_without_the_checks(data, failure_class, says):
    run = grade_crash(cases_raw(outputs=_outputs(**data)), ["a", "b"])
    assert isinstance(run, TestRun) and run.status == "fail"
    assert run.failure_class == failure_class and says in run.message


@pytest.mark.parametrize(
    ("outputs", "read"),
    [
        (_outputs(cases={"a": {"value": 1}, "b": {"error": {"type": "TypeError"}}}), ["a"]),
        (_outputs(cases={"b": {"error": {"type": "TypeError"}}}), None),  # reads not known
        (_outputs(cases={}), ["a"]),  # no value and no reason: the checks say
        ({"outputs.json": b"[" * 100_000}, ["a"]),
        ({"outputs.json": b"not json"}, ["a"]),
        ({}, ["a"]),
    ],
)
def test_the_checks_decide_when_no_case_they_read_is_known_to_have_crashed(outputs, read):
    """A crash in a case no check of the snippet reads is the checks' to judge, and what
    does not parse as the runner's record is never taken for a crash, nor for a pass."""
    assert grade_crash(cases_raw(outputs=outputs), read) is None
