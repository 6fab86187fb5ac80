"""``rcb task new``: a task folder from a queue entry, loadable but not valid until written."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from conftest import FIXTURE_TASKS

from crawler import Candidate, QueueLink, write_queue
from crawler._queue import Queue
from rcb_action.tasks import load_task

ARXIV_ID = "2507.99902"


def _candidate(**changes: object) -> Candidate:
    fields: dict[str, object] = {
        "arxiv": ARXIV_ID,
        "version": 2,
        "title": "Fixture: Differentiable Gillespie Sampling for Gene Circuits",
        "published": dt.date(2025, 7, 2),
        "updated": dt.date(2025, 8, 1),
        "primary_category": "q-bio.QM",
        "categories": ["q-bio.QM"],
        "domain": "biology",
        "score": 8,
        "reasons": ["code: repository https://gitlab.com/fixture-bio/diff-gillespie (+3)"],
        "code_links": [
            QueueLink(kind="project page", url="https://fixture-bio.github.io/dg"),
            QueueLink(kind="repository", url="https://gitlab.com/fixture-bio/diff-gillespie"),
        ],
        "abstract": "A relaxation of the Gillespie algorithm lets gradients flow.",
    }
    return Candidate(**{**fields, **changes})


@pytest.fixture
def world(tmp_path: Path) -> SimpleNamespace:
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASKS, tasks)
    queue = tmp_path / "queue.yaml"
    write_queue(Queue(queue, {ARXIV_ID: _candidate()}))
    return SimpleNamespace(tasks=tasks, queue=queue)


def new(cli, world, *extra: object):
    return cli("task", "new", *extra, "--queue", world.queue, "--tasks-dir", world.tasks)


def test_scaffold_is_filled_from_the_queue_entry_and_loads(cli, world):
    code, out, err = new(cli, world, f"{ARXIV_ID}v2")
    assert code == 0, err
    root = world.tasks / "differentiable-gillespie-sampling-gene"
    assert (root / "notes.md").is_file()
    task = load_task(root)
    candidate = _candidate()
    config = task.config
    assert config.id == root.name
    assert config.title == candidate.title
    assert config.arxiv == ARXIV_ID
    assert config.published == candidate.published  # v1, not the latest version's date
    assert config.domain == candidate.domain
    assert config.code_url == "https://gitlab.com/fixture-bio/diff-gillespie"  # the repository
    assert config.kind == "snippet" and config.env == "numpy"
    assert list(task.snippets) == ["method"]
    (selected,) = task.tests_for("method")
    assert (root / selected.split("::")[0]).is_file()
    assert candidate.title in (root / "notes.md").read_text()
    # The next steps, with the commands to run.
    assert "Next steps" in out
    assert f"rcb validate {root} --mutants" in out
    for rel in ("task.yaml", "notes.md", "src/differentiable_gillespie_sampling_gene.py"):
        assert str(root / rel) in out


def test_scaffold_tests_fail_until_written(cli, world):
    assert new(cli, world, ARXIV_ID, "--id", "dg")[0] == 0
    root = world.tasks / "dg"
    task = load_task(root)
    # The snippet's reference body is a placeholder that raises.
    assert any("NotImplementedError" in line for line in task.reference_body("method"))
    # The suite fails as it stands, and still fails with the snippet written.
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "this test is not written yet" in run.stdout
    source = root / "src" / "dg.py"
    source.write_text(source.read_text().replace("raise NotImplementedError(", "return (1.0, "))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stdout + run.stderr


@pytest.mark.slow
def test_scaffold_does_not_pass_validation(cli, world):
    assert new(cli, world, ARXIV_ID, "--id", "dg")[0] == 0
    code, out, _ = cli("validate", world.tasks / "dg")
    assert code == 1
    assert "snippet 'method': the reference fails its tests" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["2507.99999"], "queue.yaml: no candidate 2507.99999"),
        (["not-an-id"], "ARXIV_ID: 'not-an-id' is not an arXiv id"),
        ([ARXIV_ID, "--id", "toy"], "toy: already exists (choose another --id)"),
        ([ARXIV_ID, "--id", "Bad Id"], "--id: 'Bad Id' must be lowercase"),
        ([ARXIV_ID, "--env", "cuda-xl"], "--env: no "),
    ],
)
def test_mistakes_are_one_line(cli, world, args, message):
    code, _, err = new(cli, world, *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def test_a_paper_that_is_already_a_task_is_refused(cli, world):
    before = sorted(p.name for p in world.tasks.iterdir())
    toy = world.tasks / "toy" / "task.yaml"
    raw = yaml.safe_load(toy.read_text())
    toy.write_text(toy.read_text().replace(f'arxiv: "{raw["arxiv"]}"', f'arxiv: "{ARXIV_ID}"'))
    code, _, err = new(cli, world, ARXIV_ID)
    assert code == 2
    assert f"arXiv {ARXIV_ID} is already this task" in err
    assert sorted(p.name for p in world.tasks.iterdir()) == before
