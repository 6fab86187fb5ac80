"""Shared fixtures. Sandboxed runs use the real local backend (bubblewrap when present)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from rcb_action.cli import main

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "tasks"
FIXTURE_TASKS = Path(__file__).parent / "fixtures" / "tasks"
# The fixture tasks' own tests run inside sandboxes, never in this session.
collect_ignore = ["fixtures"]


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
