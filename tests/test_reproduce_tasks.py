"""The benchmark's reproduction tasks in the Docker sandbox: a gold run passes every stage
from the bare base image, installing from a wheelhouse built here (pip download through
this machine's pip configuration). The gold runs in bubblewrap are checked, beside the
adversaries, in test_reproduce_adversaries.py. Slow: each builds a venv and runs its
experiment."""

from __future__ import annotations

import pytest
from conftest import TASKS

from rcb_action.reproduce import (
    DIMENSIONS,
    REPRODUCTION_FILE,
    STAGES,
    ReproduceConfig,
    read_reproduction_records,
    reproduce,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """No gold run or wheelhouse from an earlier run counts."""
    monkeypatch.setenv("RCB_CACHE_DIR", str(tmp_path / "cache"))


def _gold_runs_pass(out, sandbox: str, tasks: str) -> None:
    summary = reproduce(
        ReproduceConfig(
            models=["reference"],
            out=out,
            tasks_dir=TASKS,
            tasks=tasks,
            sandbox=sandbox,
            progress=False,
        )
    )
    assert summary.invalid_tasks == {}
    records = read_reproduction_records(out / REPRODUCTION_FILE)
    assert records and {r.task for r in records} == {
        p.name for p in TASKS.glob(tasks) if (p / "task.yaml").is_file()
    }
    for record in records:
        assert record.failed_stage is None, (record.task, record.stages)
        assert [record.stages[s].status for s in STAGES] == ["passed"] * len(STAGES)
        assert all(record.dimensions[d] for d in DIMENSIONS if d in record.dimensions)
        assert not record.needs_review
        assert all(m.in_range for m in record.metrics.values())


@pytest.mark.docker
def test_a_gold_run_passes_in_docker_from_the_bare_base_image(
    tmp_path, fresh_cache, docker_base_image
):
    # The EKI task ships its data: its gold run passes only if the tracer records the
    # data files opened inside the container too (else "never opened" is flagged).
    _gold_runs_pass(tmp_path / "out", "docker", "repro-[ae]*")
