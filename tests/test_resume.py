"""A run killed with SIGKILL half way, then resumed, ends with exactly the records of an
uninterrupted run: none lost, none duplicated."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import FIXTURE_TASKS, fenced, write_replay

from rcb_action.results import ResultStore

SAMPLES = 4


def _replay(path: Path) -> Path:
    rows = []
    for sample in range(SAMPLES):
        slow = "import time\ntime.sleep(0.3)\n"
        rows += [
            {"task": "toy", "snippet": "scale", "sample": sample, "completion": fenced(slow + "y = a * x")},
            {"task": "toy", "snippet": "shift", "sample": sample, "completion": fenced(slow + "y = y - b")},
            {"task": "toy", "snippet": "affine", "sample": sample, "completion": fenced(slow + "y = a * x + b")},
            {"task": "toy", "snippet": "norm", "sample": sample, "completion": fenced(slow + "return 5.0")},
            {
                "task": "toy", "snippet": "slow sum", "sample": sample,
                "completion": fenced(slow + "total = sum(values) + sample_shift" if sample % 2 else slow + "total = sum(values)"),
            },
        ]  # fmt: skip
    return write_replay(path, rows)


def _command(replay: Path, out: Path) -> list[str]:
    return [
        sys.executable, "-m", "rcb_action", "evaluate", "--model", f"replay:{replay}", "--tasks-dir",
        str(FIXTURE_TASKS), "--tasks", "toy", "--samples", str(SAMPLES), "--workers", "2", "--out", str(out), "--no-progress",
    ]  # fmt: skip


def _comparable(out: Path):
    records = ResultStore(out).records()
    keys = [r.key for r in records]
    assert len(keys) == len(set(keys)), "a key was recorded twice"
    return sorted(
        (r.key, r.status, r.failure_class, r.completion, r.prompt_sha, r.task_sha) for r in records
    )


def test_sigkill_then_resume_matches_an_uninterrupted_run(tmp_path):
    replay = _replay(tmp_path / "replay.jsonl")
    whole = tmp_path / "whole"
    subprocess.run(_command(replay, whole), check=True, capture_output=True)

    resumed = tmp_path / "resumed"
    proc = subprocess.Popen(
        _command(replay, resumed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    results = resumed / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if results.is_file() and results.read_bytes().count(b"\n") >= 6:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = results.read_bytes().count(b"\n")
    assert 6 <= partial < 5 * SAMPLES, "the kill did not land half way"

    finished = subprocess.run(_command(replay, resumed), capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    assert f"{partial} already done" in finished.stderr or "already done" in finished.stderr
    assert _comparable(resumed) == _comparable(whole)


def test_torn_last_line_is_repaired(tmp_path):
    replay = _replay(tmp_path / "replay.jsonl")
    out = tmp_path / "out"
    subprocess.run(_command(replay, out), check=True, capture_output=True)
    results = out / "results.jsonl"
    data = results.read_bytes()
    lines = data.splitlines(keepends=True)
    results.write_bytes(
        b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    )  # a crash mid-write
    finished = subprocess.run(_command(replay, out), capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    assert _comparable(out) == sorted(_comparable_from_lines(lines))


def _comparable_from_lines(lines):
    from rcb_action.results import Record

    records = [Record.model_validate_json(line) for line in lines]
    return [
        (r.key, r.status, r.failure_class, r.completion, r.prompt_sha, r.task_sha) for r in records
    ]
