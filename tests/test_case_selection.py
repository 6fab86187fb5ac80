"""An attempt runs only the cases its snippet's checks read on the reference's run,
however the checks reach them (directly, or through fixtures of any scope), and every
case when a check asks for the list of names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS, fenced, write_replay

from rcb_action.results import Record, ResultStore

CASES = """import guard


def case_scale():
    print("ran case scale")
    return guard.SCALE


def case_triples():
    print("ran case triples")
    return [guard.triple(2), guard.triple(-1)]


def case_unused():
    print("ran case unused")
    return 0
"""

CHECKS = """import pytest


@pytest.fixture(scope="module")
def scale(outputs):
    return outputs["scale"]


def test_setup(scale):
    assert scale == 3


def test_setup_again(scale):
    # the module fixture read "scale" during test_setup: its read still counts here
    assert scale * 2 == 6


def test_triple(outputs, reference):
    assert outputs["triples"] == [6, -3] == reference["triples"]


def test_names(outputs, reference):
    assert outputs.names() == reference.names()
"""

TASK = """id: caseguard
title: "rcb test fixture: which cases an attempt runs"
arxiv: "0000.00000"
paper: {source: vendored, license: CC0-1.0}
published: 2025-06-01
domain: ml
kind: snippet
env: numpy
timeout_s: 15
annotated: [src/guard.py]
snippets:
  setup:
    checks: ["checks/test_guard.py::test_setup_again"]
  triple:
    checks: ["checks/test_guard.py::test_triple", "checks/test_guard.py::test_names"]
"""


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    root = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASKS / "caseguard", root / "caseguard")
    shutil.copytree(FIXTURE_TASKS / "_envs", root / "_envs")
    (root / "caseguard" / "cases" / "cases_guard.py").write_text(CASES)
    (root / "caseguard" / "checks" / "test_guard.py").write_text(CHECKS)
    (root / "caseguard" / "task.yaml").write_text(TASK)
    return root


def _ran(out: Path, log_dir: str | None) -> set[str]:
    text = (out / str(log_dir) / "cases-output.txt").read_text()
    return {line.split()[-1] for line in text.splitlines() if line.startswith("ran case ")}


def test_an_attempt_runs_only_the_cases_its_checks_read(cli, tasks, tmp_path):
    # Right answers that are not the task's own bytes (a comment added), so they run.
    replay = write_replay(
        tmp_path / "right.jsonl",
        [
            {"task": "caseguard", "snippet": "setup", "completion": fenced("SCALE = 3  # ok")},
            {"task": "caseguard", "snippet": "triple", "completion": fenced("return SCALE * x  # ok")},
        ],
    )  # fmt: skip
    out = tmp_path / "out"
    code, _, err = cli(
        "evaluate", "--model", f"replay:{replay}", "--model", "null", "--tasks-dir", tasks,
        "--out", out, "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    records = {(r.snippet, r.model): r for r in ResultStore(out).records()}
    assert {key: r.status for key, r in records.items()} == {
        ("setup", "replay:right"): "pass",
        ("setup", "null"): "fail",
        ("triple", "replay:right"): "pass",
        ("triple", "null"): "fail",
    }
    # test_setup_again reads "scale" only through a module fixture set up before it ran.
    assert _ran(out, records[("setup", "replay:right")].log_dir) == {"scale"}
    # outputs.names() reads every case.
    assert _ran(out, records[("triple", "replay:right")].log_dir) == {"scale", "triples", "unused"}


def test_an_answer_that_gives_back_the_task_code_gets_the_reference_runs_verdict(
    cli, tasks, tmp_path
):
    """Spliced back, the reference answer is the task's own file byte for byte, which the
    reference run already ran: it is not run again (and says so in its log). One byte
    more and it runs."""
    replay = write_replay(
        tmp_path / "same.jsonl",
        [
            {"task": "caseguard", "snippet": "setup", "completion": fenced("SCALE = 3")},
            {"task": "caseguard", "snippet": "triple", "completion": fenced("return SCALE * x ")},
        ],
    )
    out = tmp_path / "out"
    code, _, err = cli(
        "evaluate", "--model", "reference", "--model", f"replay:{replay}", "--tasks-dir", tasks,
        "--out", out, "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    records = {(r.snippet, r.model): r for r in ResultStore(out).records()}
    assert {r.status for r in records.values()} == {"pass"}
    for key in [("setup", "reference"), ("triple", "reference"), ("setup", "replay:same")]:
        logs = out / str(records[key].log_dir)
        assert "the task's own code, byte for byte" in (logs / "verdict.txt").read_text()
        assert not (logs / "cases-output.txt").exists()
        assert records[key].tests_ran == records[key].tests_expected == 2 - (key[0] == "setup")
    # a trailing space: not the task's bytes, so it runs (and reads every case)
    ran = records[("triple", "replay:same")]
    assert _ran(out, ran.log_dir) == {"scale", "triples", "unused"}


def _setup_answered(cli, tasks: Path, tmp_path: Path, code: str) -> tuple[Path, Record]:
    """The record of ``code`` as the answer to caseguard's snippet 'setup', and the
    results folder its logs are under."""
    replay = write_replay(
        tmp_path / "answers.jsonl",
        [{"task": "caseguard", "snippet": "setup", "completion": fenced(code)}],
    )
    out = tmp_path / "out"
    status, _, err = cli(
        "evaluate", "--model", f"replay:{replay}", "--tasks-dir", tasks, "--tasks", "caseguard",
        "--out", out, "--no-progress",
    )  # fmt: skip
    assert status == 0, err
    return out, next(r for r in ResultStore(out).records() if r.snippet == "setup")


def test_a_wrong_answer_still_fails_on_the_cases_it_runs(cli, tasks, tmp_path):
    out, record = _setup_answered(cli, tasks, tmp_path, "SCALE = 4")
    assert record.status == "fail" and record.failure_class == "assertion", record.message
    assert _ran(out, record.log_dir) == {"scale"}


def test_an_answer_that_crashes_in_a_case_its_checks_read_fails_without_the_checks(
    cli, tasks, tmp_path
):
    """Every check that reads a case that raised would only find it failed: the check
    sandbox is not started, and the verdict names the case's own exception."""
    out, record = _setup_answered(cli, tasks, tmp_path, "SCALE = 1 // 0")
    assert record.status == "fail", record.message
    assert "ZeroDivisionError" in record.message and "cases_guard.py failed" in record.message
    logs = out / str(record.log_dir)
    assert "ZeroDivisionError" in (logs / "cases-output.txt").read_text()
    assert not (logs / "checks-output.txt").exists() and record.tests_ran == 0


def test_cases_that_depend_on_each_other_are_a_validation_error(cli, tasks):
    """A case that reads state an earlier case left (here a shared random stream) gives
    other values when it runs alone: validate says so instead of failing attempts later."""
    (tasks / "caseguard" / "cases" / "cases_guard.py").write_text(
        CASES
        + """

import random

_STREAM = random.Random(7)


def case_first_draw():
    return _STREAM.random()


def case_second_draw():
    return [_STREAM.random(), guard.triple(1)]
"""
    )
    (tasks / "caseguard" / "checks" / "test_guard.py").write_text(
        CHECKS
        + """

def test_second_draw(outputs, reference):
    assert outputs["second_draw"] == reference["second_draw"]
"""
    )
    (tasks / "caseguard" / "task.yaml").write_text(
        TASK.replace(
            '"checks/test_guard.py::test_names"]',
            '"checks/test_guard.py::test_names", "checks/test_guard.py::test_second_draw"]\n'
            '  other:\n    checks: ["checks/test_guard.py::test_second_draw"]',
        )
    )
    guard = tasks / "caseguard" / "src" / "guard.py"
    guard.write_text(
        guard.read_text()
        + '\n\ndef quadruple(x):\n    # <paper2code name="other">\n    return 4 * x\n'
        '    # </paper2code name="other">\n'
    )
    code, out, err = cli("validate", tasks / "caseguard", "--seeds", "1")
    assert code == 1, out + err
    assert "snippet 'other': the reference fails when only the cases its checks read" in out + err
    assert "(second_draw)" in out + err
    assert "snippet 'triple'" not in out + err  # test_names reads every case: it runs them all


def test_an_inputs_folder_reaches_both_sandboxes_and_never_the_prompt(cli, fixture_tasks, tmp_path):
    """inputs/ holds what the cases and the checks both build (seeded inputs): one copy,
    importable in the run and in the check sandbox, not part of the prompt."""
    task = fixture_tasks / "casetoy"
    (task / "inputs").mkdir()
    (task / "inputs" / "_toy_inputs.py").write_text("POINTS = [1.0, 2.0]\nSLOPE = 2.0\n")
    cases = task / "cases" / "cases_toy.py"
    cases.write_text(
        cases.read_text().replace(
            "def case_affine_array():\n    return affine(np.array([1.0, 2.0]), 2.0, 1.0)",
            "def case_affine_array():\n    from _toy_inputs import POINTS, SLOPE\n\n"
            "    return affine(np.array(POINTS), SLOPE, 1.0)",
        )
    )
    checks = task / "checks" / "test_toy.py"
    checks.write_text(
        checks.read_text().replace(
            '    np.testing.assert_allclose(outputs["affine_array"], [3.0, 5.0])',
            "    from _toy_inputs import POINTS, SLOPE\n\n"
            '    np.testing.assert_allclose(outputs["affine_array"], [SLOPE * p + 1.0 for p in POINTS])',
        )
    )
    out = tmp_path / "out"
    code, _, err = cli(
        "evaluate", "--model", "reference", "--model", "null", "--tasks-dir", fixture_tasks,
        "--tasks", "casetoy", "--out", out, "--no-progress", "--agent-turns", "1",
    )  # fmt: skip
    assert code == 0, err
    records = {(r.snippet, r.model): r for r in ResultStore(out).records()}
    assert records[("affine", "reference")].status == "pass", records[
        ("affine", "reference")
    ].message
    assert records[("affine", "null")].status == "fail"
    code, prompt, _ = cli("prompt", "casetoy", "affine", "--tasks-dir", fixture_tasks)
    assert code == 0 and "SLOPE" not in prompt and "_toy_inputs" not in prompt

    (task / "task.yaml").write_text(
        (task / "task.yaml")
        .read_text()
        .replace("context: [src/helpers.py]", "context: [src/helpers.py, inputs/_toy_inputs.py]")
    )
    code, out, err = cli("validate", task)
    assert code == 1 and "'inputs/_toy_inputs.py' is inside inputs" in out + err
