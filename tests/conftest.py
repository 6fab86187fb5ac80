"""Shared fixtures. Sandboxed runs use the real local backend (bubblewrap when present)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rcb_action.cli import main
from rcb_action.results import ResultStore

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "tasks"
FIXTURE_TASKS = Path(__file__).parent / "fixtures" / "tasks"
# The fixture tasks' own tests run inside sandboxes, never in this session.
collect_ignore = ["fixtures"]
# Files whose tests run every real task's reference: they share the reference cache, and
# in two test processes one waited on the other's lock for each task (the hostile answers
# took 666 s there, 69 s after test_all_tasks in one process); they go to one process.
REFERENCE_RUNS = {"test_all_tasks.py", "test_hostile_answers.py"}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A file's tests go to one test process (pytest-xdist's loadgroup), so a module's
    costly fixture runs once; the files in ``REFERENCE_RUNS`` all go to one."""
    for item in items:
        name = item.path.name
        item.add_marker(
            pytest.mark.xdist_group("reference-runs" if name in REFERENCE_RUNS else name)
        )


@pytest.fixture
def fixture_tasks(tmp_path: Path) -> Path:
    """A private copy of the fixture tasks folder (tests may edit it)."""
    target = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASKS, target)
    return target


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``rcb`` in-process: returns (exit code, stdout, stderr)."""

    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def write_replay(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def fenced(code: str) -> str:
    return f"Here is the code.\n```python\n{code}\n```\n"


@pytest.fixture(autouse=True)
def _no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    for key in list(os.environ):
        if key.endswith("_API_KEY"):
            monkeypatch.delenv(key)


@pytest.fixture(scope="module", autouse=True)
def _no_container_outlives_its_module(request: pytest.FixtureRequest):
    """Every module that started sandbox containers removed them all. A leftover is
    removed here and reported against the module that left it, never the next one."""
    yield
    if "rcb_action.sandbox._docker" not in sys.modules:
        return
    import docker

    try:
        client = docker.from_env(timeout=120)
        left = client.containers.list(
            all=True, filters={"label": ["rcb.sandbox", f"rcb.pid={os.getpid()}"]}
        )
    except docker.errors.DockerException:
        return
    for container in left:
        container.remove(force=True)
    assert not left, f"{request.module.__name__} left containers: {[c.name for c in left]}"


def _docker_or_skip(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_client():
    """A docker-py client; skips (fails under CI=true) when no daemon answers."""
    try:
        import docker

        client = docker.from_env(timeout=120)
        client.ping()
    except Exception as exc:
        _docker_or_skip(
            f"no Docker daemon answers ({type(exc).__name__}); start dockerd to run Docker tests"
        )
    return client


@pytest.fixture(scope="session")
def docker_base_image(docker_client) -> str:
    """A base image that exists here: $RCB_BASE_IMAGE, rcb-base:bookworm or python:3.11-slim.

    No registry is reachable from CI, so .ci/run builds rcb-base:bookworm with
    ``rcb sandbox build-base`` before the tests.
    """
    import docker.errors

    candidates = [os.environ.get("RCB_BASE_IMAGE"), "rcb-base:bookworm", "python:3.11-slim"]
    for tag in [c for c in candidates if c]:
        try:
            docker_client.images.get(tag)
        except docker.errors.ImageNotFound:
            continue
        os.environ["RCB_BASE_IMAGE"] = tag
        return tag
    _docker_or_skip("no base image (build one with `rcb sandbox build-base`)")
    return ""


def run_and_signal(tmp_path, sig: int, sandbox: str) -> tuple[int, int, list[str], Path]:
    """Start a run of 20 one-second samples, signal it once two records are in."""
    slow = "import time\ntime.sleep(1)\n"
    rows = [
        {
            "task": "toy",
            "snippet": "slow sum",
            "sample": s,
            "completion": fenced(slow + "total = sum(values)"),
        }
        for s in range(20)
    ]
    replay = write_replay(tmp_path / "slow.jsonl", rows)
    out = tmp_path / f"out-{sandbox}-{sig}"
    command = [
        sys.executable, "-m", "rcb_action", "evaluate", "--model", f"replay:{replay}", "--tasks-dir",
        str(FIXTURE_TASKS), "--tasks", "toy", "--samples", "20", "--sandbox", sandbox, "--workers", "2",
        "--out", str(out), "--no-progress",
    ]  # fmt: skip
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=os.environ.copy(),
        # A shell starts background jobs with SIGINT ignored, and children inherit that:
        # give the run the default disposition, as a terminal would.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (
        results.is_file() and results.read_bytes().count(b"\n") >= 2
    ):
        time.sleep(0.1)
    proc.send_signal(sig)
    return proc.wait(timeout=120), proc.pid, command, out


def resume_to_the_end(command: list[str], out: Path) -> None:
    """The same command again finishes the run: every attempt once, none lost or doubled."""
    before = ResultStore(out).records()
    assert 0 < len(before) < 20 * 5
    subprocess.run(command, check=True, capture_output=True, timeout=600, env=os.environ.copy())
    records = ResultStore(out).records()
    keys = [r.key for r in records]
    assert len(keys) == len(set(keys)) == 20 * 5  # 20 samples of the toy task's 5 snippets
    assert records[: len(before)] == before  # nothing written before the signal was lost
    assert all(r.status == "pass" for r in records if r.snippet == "slow sum")


PEEK = (
    "import os, sys\n"
    "root = os.path.dirname(os.getcwd())\n"
    "try:\n    print('listed', os.listdir(root))\nexcept OSError as e:\n    print('refused', e.errno)\n"
    "print('own', sorted(os.listdir('.')))\n"
)


def assert_attempts_are_hidden(backend: Any, task: Any) -> None:
    """Two attempt folders in one workspace: from one, the workspace cannot be listed
    (so the other cannot be found), while the attempt's own folder can."""
    sandbox = backend.open(task)
    try:
        sandbox.mkdir("a-first", writable=True)
        sandbox.mkdir("a-second", writable=True)
        sandbox.write_files({"a-first/mine.py": b"X = 1\n"}, writable=False)
        seen = sandbox.exec([sandbox.python, "-c", PEEK], timeout_s=60, cwd="a-first").stdout
    finally:
        backend.close()
    assert "refused 13" in seen and "a-second" not in seen
    assert "own ['mine.py']" in seen
