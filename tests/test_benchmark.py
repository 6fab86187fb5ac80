"""What the benchmark promises, checked on the task folders themselves (no sandbox runs).

The sandboxed runs on this machine are tests/test_all_tasks.py. Mutant kills, and that
null fails every snippet, come from the mutants.json files `rcb validate --mutants`
writes, of the task's current hash, only when its validation passed (the reference
passes under every seed and null fails every snippet).
"""

import datetime as dt

import pytest
from conftest import TASKS

from rcb_action.tasks import LICENSE_FILES, load_tasks
from rcb_action.validate import read_mutants_file, snippet_sizes
from rcb_action.validate._index import render_index

SNIPPET_TASKS = [t for t in load_tasks(TASKS) if t.config.kind == "snippet"]


def test_size_breadth_and_balance():
    """The size and spread the benchmark promises (at least 30 papers and 2,000 weighted
    lines, no paper above 8%; tasks/README.md reports where it stands)."""
    assert len(SNIPPET_TASKS) >= 30
    assert sum(t.weight(n) for t in SNIPPET_TASKS for n in t.snippet_names()) >= 2000
    outside_ml = [t for t in SNIPPET_TASKS if t.config.domain != "ml"]
    assert len(outside_ml) >= 12, [t.id for t in outside_ml]
    assert len({t.config.domain for t in outside_ml}) >= 8
    assert sum(1 for t in SNIPPET_TASKS if t.config.published >= dt.date(2025, 7, 1)) >= 30
    weights = {t.id: sum(t.weight(n) for n in t.snippet_names()) for t in SNIPPET_TASKS}
    total = sum(weights.values())
    heaviest = max(weights, key=weights.get)
    assert weights[heaviest] / total <= 0.08, (
        f"{heaviest} holds {weights[heaviest] / total:.1%} of the weight"
    )


def test_every_snippet_task_is_built_from_the_authors_code():
    """The re-implementations of the first version are retired: every snippet task
    pins the authors' repository (test_a_task_from_the_authors_code checks the rest)."""
    assert [t.id for t in SNIPPET_TASKS if t.config.code_commit is None] == []


@pytest.mark.parametrize("task", SNIPPET_TASKS, ids=lambda t: t.id)
def test_task_is_complete(task):
    assert task.config.published >= dt.date(2025, 1, 1)
    assert (task.root / "notes.md").read_text().strip()
    assert task.config.paper.source == "arxiv" and task.config.arxiv_version  # the LaTeX, pinned
    for name in task.snippet_names():
        assert name in task.config.snippets, f"snippet '{name}' names no tests"


@pytest.mark.parametrize("task", SNIPPET_TASKS, ids=lambda t: t.id)
def test_every_snippet_kills_a_mutant(task):
    stored = read_mutants_file(task)
    assert stored is not None, (
        f"{task.id}: mutants.json is missing or stale: run rcb validate --mutants {task.root}"
    )
    for name in task.snippet_names():
        entry = stored["snippets"][name]
        assert entry["killed"] >= 1, f"{task.id} / {name}: no mutant killed"


def test_tasks_readme_is_current():
    assert (TASKS / "README.md").read_text() == render_index(TASKS), (
        "run `rcb task index` and commit tasks/README.md"
    )


V2_TASKS = [t for t in SNIPPET_TASKS if t.config.code_commit is not None]


@pytest.mark.parametrize("task", V2_TASKS, ids=lambda t: t.id)
def test_a_task_from_the_authors_code(task):
    """Benchmark v2: the authors' code at a pinned commit under a permissive licence, graded
    with cases and checks, snippets sized like ResearchCodeBench's."""
    assert task.grading == "cases"
    assert task.config.code_url and task.config.code_license
    assert any((task.root / name).is_file() for name in LICENSE_FILES)
    sizes = snippet_sizes(task)
    assert sizes.mean >= 6 and sizes.short_share <= 0.25, (task.id, str(sizes))
    assert task.config.agent is not None, f"{task.id}: no visible checks for agent mode"
    stored = read_mutants_file(task)
    assert stored is not None
    killed = sum(entry["killed"] for entry in stored["snippets"].values())
    total = sum(entry["total"] for entry in stored["snippets"].values())
    assert killed >= 0.9 * total, f"{task.id}: {killed} of {total} mutants killed"
