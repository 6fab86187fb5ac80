"""Every task in tasks/: the reference passes and null fails every snippet locally; on
Docker, the tasks of the light environments give the same verdicts.

The Docker leg builds one image per environment. Building the heavy ones (PyTorch, JAX)
for every task on every CI run would take most of the 30 minutes `.ci/run` may use, so
this leg takes the tasks whose environment is one of ``DOCKER_ENVS``; the scheduled
``validate-all`` workflow runs ``rcb validate --sandbox docker`` over every task, and
``RCB_DOCKER_ALL_TASKS=1`` runs this leg over every task too."""

import os
from pathlib import Path

import pytest
from conftest import TASKS

from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, evaluate
from rcb_action.tasks import load_tasks

pytestmark = pytest.mark.slow

DOCKER_ENVS = {"numpy", "scipy"}


def _docker_selection() -> str | None:
    """The comma-separated task globs of the Docker leg (None: every task)."""
    if os.environ.get("RCB_DOCKER_ALL_TASKS") == "1":
        return None
    ids = [task.id for task in load_tasks(TASKS) if task.config.env in DOCKER_ENVS]
    assert ids, f"no task in tasks/ uses one of the environments {sorted(DOCKER_ENVS)}"
    return ",".join(ids)


def _run(out: Path, sandbox: str, tasks: str | None = None) -> dict:
    config = EvalConfig(
        models=["reference", "null"],
        out=out,
        tasks_dir=TASKS,
        tasks=tasks,
        workers=2,
        sandbox=sandbox,
        progress=False,
    )
    evaluate(config)
    return {r.key: r for r in ResultStore(out).records()}


@pytest.fixture(scope="module")
def local_results(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("all-local"), "local")


def test_every_task_reference_passes_and_null_fails(local_results):
    assert local_results
    for record in local_results.values():
        expected = "pass" if record.model == "reference" else "fail"
        assert record.status == expected, (
            f"{record.task} / {record.snippet} / {record.model}: {record.message}"
        )


@pytest.mark.docker
def test_docker_gives_the_same_verdicts_as_local(local_results, tmp_path, docker_base_image):
    docker = _run(tmp_path / "docker", "docker", _docker_selection())
    ran = {record.task for record in docker.values()}
    local = {key: record for key, record in local_results.items() if record.task in ran}
    assert docker.keys() == local.keys()
    assert "cases" in {record.grading for record in docker.values()}, "no cases-and-checks task ran"
    differ = [
        (key, local[key].status, docker[key].status, docker[key].message)
        for key in docker
        if docker[key].status != local[key].status
    ]
    assert not differ, differ[:5]
