"""``rcb task new``: a task folder scaffolded from a queue entry.

The scaffold loads (``rcb_action.tasks.load_task`` accepts it) but is not a
valid task: its one marked snippet raises ``NotImplementedError`` and its test
fails until written, so ``rcb validate`` reports both until the author replaces
them with the paper's code and real tests.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from crawler._candidates import task_papers
from crawler._queue import Candidate
from rcb_action.errors import RcbError

SNIPPET_NAME = "method"
_STOP_WORDS = {"a", "an", "and", "for", "in", "of", "on", "the", "to", "via", "with", "fixture"}


def task_id_for(candidate: Candidate) -> str:
    """A folder name from the title's first meaningful words (``muon``, ``gated-deltanet``...)."""
    words = [w for w in re.findall(r"[a-z0-9]+", candidate.title.lower()) if w not in _STOP_WORDS]
    slug = "-".join(words[:4])[:40].strip("-")
    return slug or "arxiv-" + candidate.arxiv.replace(".", "-")


def _module_name(task_id: str) -> str:
    name = re.sub(r"[^a-z0-9_]", "_", task_id)
    return name if name[:1].isalpha() else f"task_{name}"


@dataclass(frozen=True)
class Scaffold:
    """What ``rcb task new`` wrote."""

    root: Path
    files: list[str]
    module: str


def _task_yaml(candidate: Candidate, task_id: str, env: str, module: str) -> str:
    repo = next((link.url for link in candidate.code_links if link.kind == "repository"), None)
    code_url = repo or (candidate.code_links[0].url if candidate.code_links else None)
    lines = [
        f"# Scaffolded by `rcb task new {candidate.arxiv}` from crawler/queue.yaml.",
        "# Fill in the TODOs, then: rcb validate tasks/" + task_id + " --mutants",
        f"id: {task_id}",
        f"title: {json.dumps(candidate.title, ensure_ascii=False)}",
        f'arxiv: "{candidate.arxiv}"',
        "arxiv_version: 1  # TODO: the version whose LaTeX the model reads (rcb paper show "
        + task_id
        + ")",
        f"published: {candidate.published.isoformat()}  # arXiv v1 date: the contamination clock",
    ]
    if code_url:
        lines.append(f"code_url: {json.dumps(code_url)}")
    lines += [
        f"domain: {candidate.domain}",
        "kind: snippet",
        f"env: {env}  # tasks/_envs/<env>/requirements.txt",
        "gpu: none",
        "timeout_s: 60",
        f"annotated: [src/{module}.py]",
        "context: []  # other files shown to the model in full",
        "paper: {source: arxiv}  # the paper's own LaTeX, fetched once and cached",
        "snippets:  # TODO: one entry per snippet, naming the tests that decide it",
        f"  {SNIPPET_NAME}:",
        f'    tests: ["tests/test_{module}.py::test_{SNIPPET_NAME}_matches_a_hand_worked_case"]',
    ]
    return "\n".join(lines) + "\n"


def _notes_md(candidate: Candidate) -> str:
    links = "\n".join(f"- {link.kind}: {link.url}" for link in candidate.code_links)
    return (
        f"# Notes on {candidate.title}\n\n"
        f"arXiv {candidate.arxiv} (v1 {candidate.published}).\n\n"
        "<!-- Maintainers' notes on the method: where each snippet is in the paper, what\n"
        "the code does differently. Never shown as the paper: models read the paper's own\n"
        "LaTeX (task.yaml 'paper'); these notes are given only with --paper notes. -->\n\n"
        "## Abstract\n\n"
        f"{candidate.abstract}\n\n"
        "## Code\n\n"
        f"{links}\n"
    )


def _source(candidate: Candidate) -> str:
    return (
        f'"""{candidate.title} (arXiv {candidate.arxiv}).\n\n'
        "TODO(rcb task new): replace this skeleton with the paper's method, written as the\n"
        "paper describes it, and mark each part a model should write with paper2code tags.\n"
        '"""\n\n\n'
        f"def {SNIPPET_NAME}(x):\n"
        '    """TODO: what this computes, in the paper\'s notation."""\n'
        f'    # <paper2code name="{SNIPPET_NAME}">\n'
        '    raise NotImplementedError("rcb task new: write the paper\'s method here")\n'
        f'    # </paper2code name="{SNIPPET_NAME}">\n'
    )


def _test(module: str) -> str:
    return (
        f'"""Tests for {module}: never shown to the model."""\n\n'
        "import pytest\n\n"
        f"from {module} import {SNIPPET_NAME}\n\n\n"
        f"def test_{SNIPPET_NAME}_matches_a_hand_worked_case():\n"
        "    # TODO(rcb task new): compare against a value derived independently of the code\n"
        "    # (a closed form, an invariant, a small case worked by hand), then delete this line.\n"
        f'    pytest.fail("rcb task new: this test is not written yet")\n'
        f"    assert {SNIPPET_NAME}(1.0) is not None\n"
    )


def choose_env(tasks_dir: Path, env: str | None) -> str:
    """The shared environment: ``env`` when given (it must exist), else ``numpy``, else the first.

    Raises:
        RcbError: the environment is not under ``tasks/_envs``.
    """
    envs_dir = tasks_dir / "_envs"
    available = sorted(p.parent.name for p in envs_dir.glob("*/requirements.txt"))
    if env is not None:
        if env not in available:
            raise RcbError(
                f"--env: no {envs_dir / env / 'requirements.txt'} "
                f"(available: {', '.join(available) or 'none'})"
            )
        return env
    if not available:
        raise RcbError(f"{envs_dir}: no environments (add <env>/requirements.txt, then --env)")
    return "numpy" if "numpy" in available else available[0]


def scaffold_task(
    candidate: Candidate, tasks_dir: Path, *, task_id: str | None = None, env: str | None = None
) -> Scaffold:
    """Write ``tasks_dir/<task_id>/`` for ``candidate`` and check that it loads.

    Raises:
        RcbError: the id is malformed or taken, the paper is already a task, or the
            environment does not exist.
    """
    from rcb_action.tasks import load_task

    if not tasks_dir.is_dir():
        raise RcbError(f"{tasks_dir}: no such tasks folder (pass --tasks-dir)")
    task_id = task_id or task_id_for(candidate)
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", task_id):
        raise RcbError(f"--id: '{task_id}' must be lowercase letters, digits, '-' or '_'")
    existing = task_papers(tasks_dir).get(candidate.arxiv)
    if existing is not None:
        raise RcbError(
            f"{tasks_dir / existing / 'task.yaml'}: arXiv {candidate.arxiv} is already this task"
        )
    root = tasks_dir / task_id
    if root.exists():
        raise RcbError(f"{root}: already exists (choose another --id)")
    env = choose_env(tasks_dir, env)
    module = _module_name(task_id)
    files = {
        "task.yaml": _task_yaml(candidate, task_id, env, module),
        "notes.md": _notes_md(candidate),
        f"src/{module}.py": _source(candidate),
        f"tests/test_{module}.py": _test(module),
    }
    try:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        load_task(root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return Scaffold(root=root, files=sorted(files), module=module)
