"""Every task in tasks/: the reference passes and null fails every snippet, on both backends,
with the same verdicts."""

from pathlib import Path

import pytest
from conftest import TASKS

from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, evaluate

pytestmark = pytest.mark.slow


def _run(out: Path, sandbox: str) -> dict:
    config = EvalConfig(
        models=["reference", "null"],
        out=out,
        tasks_dir=TASKS,
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
    docker = _run(tmp_path / "docker", "docker")
    assert docker.keys() == local_results.keys()
    differ = [
        (key, local_results[key].status, docker[key].status, docker[key].message)
        for key in docker
        if docker[key].status != local_results[key].status
    ]
    assert not differ, differ[:5]
