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

from crawler import Candidate, QueueLink, license_id, write_queue
from crawler._queue import Queue
from rcb_action.tasks import load_task
from rcb_action.validate._index import render_index

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
    assert config.kind == "snippet" and config.env == "numpy" and task.grading == "cases"
    assert config.code_commit is None  # nothing read from the authors' code yet
    assert list(task.snippets) == ["method"]
    (selected,) = task.tests_for("method")
    assert (root / selected.split("::")[0]).is_file()
    assert candidate.title in (root / "notes.md").read_text()
    # The next steps, with the commands to run.
    assert "Next steps" in out
    assert f"rcb validate {root} --mutants" in out
    for rel in ("task.yaml", "notes.md", "src/differentiable_gillespie_sampling_gene.py"):
        assert str(root / rel) in out


def test_scaffold_cases_and_checks_fail_until_written(cli, world, tmp_path):
    assert new(cli, world, ARXIV_ID, "--id", "dg")[0] == 0
    root = world.tasks / "dg"
    task = load_task(root)
    assert task.grading == "cases"
    # The snippet's reference body is a placeholder that raises.
    assert any("NotImplementedError" in line for line in task.reference_body("method"))
    run_case = [
        sys.executable,
        "-c",
        "import cases_dg\ntry:\n    cases_dg.case_method()\nexcept NotImplementedError as e:\n"
        "    print('raised:', e)",
    ]
    env = {**os.environ, "PYTHONPATH": f"{root / 'src'}:{root / 'cases'}"}
    source = root / "src" / "dg.py"
    for _ in range(2):  # as scaffolded, and with the snippet written: the case is not
        run = subprocess.run(run_case, env=env, capture_output=True, text=True, check=True)
        assert "raised: rcb task new: this case is not written yet" in run.stdout
        source.write_text(source.read_text().replace("raise NotImplementedError(", "return ("))
    # The check fails whatever the outputs are.
    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef outputs():\n    return {'method': 1.0}\n\n"
        "reference = outputs\n"
    )
    shutil.copy(root / "checks" / "test_dg.py", tmp_path / "test_dg.py")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_dg.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1 and "this check is not written yet" in run.stdout, run.stdout


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
        ([ARXIV_ID, "--code", "https://github.com/o/r@abc1234"], "--code needs --from PATH"),
        ([ARXIV_ID, "--from", "."], "--from and --files read the authors' code"),
        ([ARXIV_ID, "--code", "github.com/o/r", "--from", "."], "--code: 'github.com/o/r' is not"),
        ([ARXIV_ID, "--code", "https://x.org/r@abcd", "--from", "/nonexistent"], "is not a git"),
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


# --- laid out from the authors' code ---------------------------------------------------

MIT = """\
MIT License

Copyright (c) 2025 Fixture Authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND.
"""
BSD = """\
Copyright (c) 2025, Fixture Authors. All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.
{third}
THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS".
"""
THIRD = """
3. Neither the name of the copyright holder nor the names of its
   contributors may be used to endorse or promote products derived from
   this software without specific prior written permission.
"""
APACHE = """\
Copyright 2025 Fixture Authors

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0
"""
GPL = """\
                    GNU GENERAL PUBLIC LICENSE
                       Version 3, 29 June 2007

 Copyright (C) 2007 Free Software Foundation, Inc. <https://fsf.org/>
 Everyone is permitted to copy and distribute verbatim copies
 of this license document, but changing it is not allowed.
"""
URL = "https://github.com/fixture-bio/diff-gillespie"


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Fixture",
        "GIT_AUTHOR_EMAIL": "fixture@example.org",
        "GIT_COMMITTER_NAME": "Fixture",
        "GIT_COMMITTER_EMAIL": "fixture@example.org",
    }
    run = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, check=True
    )
    return run.stdout.strip()


def _repository(path: Path, license_text: str = MIT, license_name: str = "LICENSE") -> list[str]:
    """A git repository with two commits of the authors' module; returns their shas."""
    (path / "pkg").mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / license_name).write_text(license_text)
    (path / "README.md").write_text("# Differentiable Gillespie\n")
    (path / "pkg" / "__init__.py").write_text("")
    (path / "pkg" / "gillespie.py").write_text("def rate(k, x):\n    return k * x  # first\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "first")
    first = _git(path, "rev-parse", "HEAD")
    (path / "pkg" / "gillespie.py").write_text("def rate(k, x):\n    return k * x * x  # later\n")
    _git(path, "commit", "-q", "-am", "later")
    return [first, _git(path, "rev-parse", "HEAD")]


def test_a_task_is_laid_out_from_the_authors_code_at_the_commit(cli, world, tmp_path):
    repo = tmp_path / "diff-gillespie"
    first, _ = _repository(repo)
    code, out, err = new(
        cli, world, ARXIV_ID, "--code", f"{URL}@{first[:7]}", "--from", repo,
        "--files", "pkg/gillespie.py", "--id", "dg",
    )  # fmt: skip
    assert code == 0, err
    root = world.tasks / "dg"
    raw = yaml.safe_load((root / "task.yaml").read_text())
    candidate = _candidate()
    # The commit is pinned in full, the licence named and its file copied as it is.
    assert raw["code_url"] == URL and raw["code_commit"] == first
    assert raw["code_license"] == "MIT" and raw["arxiv_version"] == 1
    assert (root / "LICENSE").read_text() == MIT
    # The paper's metadata from the queue entry.
    assert raw["title"] == candidate.title and raw["published"] == candidate.published
    assert raw["arxiv"] == ARXIV_ID and raw["domain"] == candidate.domain
    # The file as it was at that commit, not as it is now.
    assert (root / "src" / "pkg" / "gillespie.py").read_text().endswith("k * x  # first\n")
    assert raw["annotated"] == ["src/pkg/gillespie.py"]
    assert sorted(p.name for p in (root / "cases").iterdir()) == ["cases_dg.py"]
    assert sorted(p.name for p in (root / "checks").iterdir()) == ["test_dg.py"]
    notes = (root / "notes.md").read_text()
    assert f"Built from {URL} at commit {first}" in notes
    for item in ("What to mask", "--seeds 10", "rcb validate tasks/dg --mutants", "tolerances"):
        assert item in notes
    assert f"{URL} at {first} (MIT)" in out and "Next steps" in out
    # Once the maintainer marks a snippet and names its checks, it loads as built from
    # the authors' code, the licence kept out of every sandbox.
    source = root / "src" / "pkg" / "gillespie.py"
    source.write_text(
        'def rate(k, x):\n    # <paper2code name="rate">\n    return k * x  # first\n'
        '    # </paper2code name="rate">\n'
    )
    raw["snippets"] = {"rate": {"checks": ["checks/test_dg.py::test_method"]}}
    (root / "task.yaml").write_text(yaml.safe_dump(raw))
    task = load_task(root)
    assert task.config.code_commit == first and task.config.code_license == "MIT"
    assert "LICENSE" not in task.run_files and "src/pkg/gillespie.py" in task.run_files


def test_from_a_bare_copy_without_a_queue_entry_the_paper_is_left_to_fill(cli, world, tmp_path):
    _, later = _repository(tmp_path / "work", license_text=BSD.format(third=THIRD))
    bare = tmp_path / "mirror.git"
    subprocess.run(["git", "clone", "-q", "--bare", tmp_path / "work", bare], check=True)
    code, out, err = new(
        cli, world, "2509.00001", "--code", f"{URL}.git@{later[:10]}", "--from", bare,
        "--files", "pkg",
    )  # fmt: skip
    assert code == 0, err
    root = world.tasks / "diff-gillespie"  # named after the repository
    raw = yaml.safe_load((root / "task.yaml").read_text())
    assert raw["code_commit"] == later and raw["code_license"] == "BSD-3-Clause"
    assert raw["code_url"] == URL
    assert (root / "src" / "pkg" / "gillespie.py").read_text().endswith("# later\n")
    assert (root / "src" / "pkg" / "__init__.py").is_file()
    assert "Fill in title, published, domain" in out
    # The placeholders are refused until filled.
    code, out, _ = cli("validate", root)
    assert code == 1 and "key 'published'" in out


@pytest.mark.parametrize(
    ("text", "spdx"),
    [
        (MIT, "MIT"),
        (APACHE, "Apache-2.0"),
        (BSD.format(third=""), "BSD-2-Clause"),
        (BSD.format(third=THIRD), "BSD-3-Clause"),
        (BSD.format(third="\n3. All advertising materials mentioning features of this\n"), None),
        (MIT + "\nThe Software may be used for non-commercial purposes only.\n", None),
        (MIT + "\n" + APACHE, None),  # two licences in one file: a person decides
        (GPL, None),
        ("All rights reserved.\n", None),
    ],
)
def test_licence_is_read_from_its_text(text, spdx):
    assert license_id(text) == spdx


def test_a_gpl_licence_is_refused(cli, world, tmp_path):
    repo = tmp_path / "gpl"
    first, _ = _repository(repo, license_text=GPL, license_name="COPYING")
    before = sorted(p.name for p in world.tasks.iterdir())
    code, _, err = new(cli, world, ARXIV_ID, "--code", f"{URL}@{first}", "--from", repo)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert f"{URL}@{first[:12]}: COPYING is not MIT, Apache-2.0, BSD-2-Clause or " in line
    assert "(it names the GNU General Public License)" in line
    assert sorted(p.name for p in world.tasks.iterdir()) == before


def test_a_repository_without_a_licence_is_refused(cli, world, tmp_path):
    repo = tmp_path / "none"
    _repository(repo)
    _git(repo, "rm", "-q", "LICENSE")
    _git(repo, "commit", "-q", "-m", "no licence")
    code, _, err = new(cli, world, ARXIV_ID, "--code", f"{URL}@{_git(repo, 'rev-parse', 'HEAD')}",
                       "--from", repo)  # fmt: skip
    assert code == 2 and "no licence file (LICENSE, COPYING)" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--code", f"{URL}@abcdef0"], "--code: commit abcdef0 is not in"),
        (["--files", "pkg/absent.py"], "--files: 'pkg/absent.py' is not in"),
        (["--files", "../outside.py"], "--files: '../outside.py' is not a path inside"),
        (["--files", "pkg/link.py"], "--files: 'pkg/link.py' is a symbolic link"),
    ],
)
def test_code_mistakes_are_one_line(cli, world, tmp_path, extra, message):
    repo = tmp_path / "repo"
    _repository(repo)
    (repo / "pkg" / "link.py").symlink_to("gillespie.py")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "a link")
    head = _git(repo, "rev-parse", "HEAD")
    args = ["--code", f"{URL}@{head}", "--from", repo, *extra]
    if extra[0] == "--code":
        args = [*extra, "--from", repo]
    code, _, err = new(cli, world, ARXIV_ID, *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err
    assert not (world.tasks / "differentiable-gillespie-sampling-gene").exists()


def test_the_index_shows_the_code_a_task_is_built_from(world):
    root = world.tasks / "casetoy"
    sha = "0123456789abcdef0123456789abcdef01234567"
    (root / "task.yaml").write_text(
        (root / "task.yaml").read_text()
        + f"code_url: https://github.com/example/toy\ncode_commit: {sha}\ncode_license: MIT\n"
    )
    (root / "LICENSE").write_text(MIT)
    index = render_index(world.tasks)
    rows = {line.split("|")[1].strip(): line for line in index.splitlines() if "](" in line}
    link = f"[`0123456`](https://github.com/example/toy/tree/{sha})"
    # Licence, commit, grading, snippets, weighted lines, distinct lines.
    assert f"| MIT | {link} | cases and checks | 5 | 11 | 9 |" in rows["[casetoy](casetoy/)"]
    assert "| — | — | in-process | 5 | 11 | 9 |" in rows["[toy](toy/)"]
    assert "**4 papers, 14 snippets, 26 weighted lines (22 distinct masked lines).**" in index
    assert "1 of 4 papers are built from the authors' code at a pinned commit" in index
