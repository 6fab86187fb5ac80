"""Every task in tasks/, run on this machine: the reference passes every snippet, and
null fails one snippet of every task (its heaviest); on Docker, the tasks of the light
environments give the same verdicts.

What a CI run re-proves here is what depends on the machine: that each task's own code
still passes its checks on this CPU, in these environments (a task's reference once
failed its own check on a CPU without AVX-512, and only this test saw it). That null
fails *every* snippet is a property of the checks, not of the machine: `rcb validate`
proves it, on the tasks a pull request changes and in the scheduled ``validate-all``
workflow, and writes ``mutants.json`` with the task's hash only when it holds (with
the reference passing under every seed); ``tests/test_benchmark.py`` fails CI for a
task whose ``mutants.json`` is missing or stale. Null on all 218 snippets here took
about 9 of the 17 minutes this test used to take.

The Docker leg builds one image per environment. Building the heavy ones (PyTorch, JAX)
for every task on every CI run would take most of the 30 minutes `.ci/run` may use, so
this leg takes the tasks whose environment is one of ``DOCKER_ENVS``; the scheduled
``validate-all`` workflow runs ``rcb validate --sandbox docker`` over every task, and
``RCB_DOCKER_ALL_TASKS=1`` runs this leg over every task too."""

import os
from pathlib import Path

import pytest
from conftest import TASKS, fenced, write_replay

from rcb_action.results import Record, ResultStore
from rcb_action.runner import EvalConfig, evaluate
from rcb_action.tasks import Task, load_tasks

pytestmark = pytest.mark.slow

DOCKER_ENVS = {"numpy", "scipy"}
# The replay model that answers null (``pass``) on each task's heaviest snippet; every
# other snippet it leaves unanswered, which is scored ``no_code`` without running.
NULL_SAMPLE = "null-sample"
SNIPPET_TASKS = [t for t in load_tasks(TASKS) if t.config.kind == "snippet"]


def _heaviest(task: Task) -> str:
    return max(sorted(task.snippet_names()), key=task.weight)


def _docker_selection() -> str | None:
    """The comma-separated task globs of the Docker leg (None: every task)."""
    if os.environ.get("RCB_DOCKER_ALL_TASKS") == "1":
        return None
    ids = [task.id for task in SNIPPET_TASKS if task.config.env in DOCKER_ENVS]
    assert ids, f"no task in tasks/ uses one of the environments {sorted(DOCKER_ENVS)}"
    return ",".join(ids)


def _null_sample(path: Path) -> Path:
    rows = [
        {"model": NULL_SAMPLE, "task": t.id, "snippet": _heaviest(t), "completion": fenced("pass")}
        for t in SNIPPET_TASKS
    ]
    return write_replay(path, rows)


def _run(out: Path, sandbox: str, tasks: str | None = None) -> dict:
    config = EvalConfig(
        models=["reference", f"replay:{_null_sample(out.parent / f'{out.name}-null.jsonl')}"],
        out=out,
        tasks_dir=TASKS,
        tasks=tasks,
        workers=2,
        sandbox=sandbox,
        progress=False,
    )
    evaluate(config)
    return {r.key: r for r in ResultStore(out).records()}


def _sampled(records: dict) -> list[Record]:
    heaviest = {t.id: _heaviest(t) for t in SNIPPET_TASKS}
    return [r for r in records.values() if r.model == NULL_SAMPLE and r.snippet == heaviest[r.task]]


@pytest.fixture(scope="module")
def local_results(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("all-local") / "results", "local")


def test_every_task_reference_passes_and_null_fails(local_results):
    reference = [r for r in local_results.values() if r.model == "reference"]
    assert len(reference) == sum(len(t.snippet_names()) for t in SNIPPET_TASKS)
    for record in reference:
        assert record.status == "pass", f"{record.task} / {record.snippet}: {record.message}"
    sampled = _sampled(local_results)
    assert {r.task for r in sampled} == {t.id for t in SNIPPET_TASKS}
    for record in sampled:
        # Ran and failed its checks: not a harness error, not an unanswered snippet.
        assert record.status == "fail", f"{record.task} / {record.snippet}: {record.message}"
        assert record.failure_class != "no_code", record.message


@pytest.mark.docker
def test_docker_gives_the_same_verdicts_as_local(local_results, tmp_path, docker_base_image):
    docker = _run(tmp_path / "docker", "docker", _docker_selection())
    ran = {record.task for record in docker.values()}
    local = {key: record for key, record in local_results.items() if record.task in ran}
    assert docker.keys() == local.keys()
    assert "cases" in {record.grading for record in docker.values()}, "no cases-and-checks task ran"
    assert _sampled(docker), "no null answer ran on Docker"
    differ = [
        (key, local[key].status, docker[key].status, docker[key].message)
        for key in docker
        if docker[key].status != local[key].status
    ]
    assert not differ, differ[:5]
