"""Malformed tasks give one line that names the file and the key (or file:line)."""

from pathlib import Path

import pytest

from rcb_action.errors import TaskError
from rcb_action.tasks import load_task


def _edit(task_dir: Path, old: str, new: str) -> None:
    path = task_dir / "task.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("timeout_s: 30\n", "timeout_s: 30\ncolour: blue\n", "unknown key 'colour'"),
        ("domain: ml\n", "", "missing required key 'domain'"),
        (
            "timeout_s: 30\n",
            "timeout_s: soon\n",
            "key 'timeout_s': Input should be a valid integer",
        ),
        (
            'arxiv: "0000.00000"',
            'arxiv: "arXiv:1234"',
            "key 'arxiv': 'arXiv:1234' is not a new-style arXiv id",
        ),
        (
            'arxiv: "0000.00000"\n',
            "",
            "missing required key 'arxiv' (or 'paper_url' for a paper that is not on arXiv)",
        ),
        ('arxiv: "0000.00000"', "paper_url: openreview.net/x", "key 'paper_url'"),
        ("published: 2025-06-01", "published: last spring", "key 'published'"),
        ("env: numpy\n", "env: numpy\ngpu: maybe\n", "key 'gpu'"),
        ("id: toy", "id: other", "key 'id': 'other' must equal the folder name 'toy'"),
        ("env: numpy", "env: nothere", "key 'env':"),
        (
            "context: [src/helpers.py]",
            "context: [src/missing.py]",
            "key 'context': file 'src/missing.py' not found",
        ),
        ("  scale:\n", "  scael:\n", "key 'snippets.scael': no snippet of that name"),
        ("  scale:\n    tests: [", "  scale:\n    tests: 5 #[", "key 'snippets.scale.tests'"),
        (
            "annotated: [src/toy.py]",
            "annotated: [../x.py]",
            "key 'annotated': path '../x.py' leaves the task folder",
        ),
        (
            "context: [src/helpers.py]",
            "context: [src/../../guard/src/guard.py]",
            "key 'context': path 'src/../../guard/src/guard.py' leaves the task folder",
        ),
        (
            "context: [src/helpers.py]",
            "context: [/etc/hostname]",
            "key 'context': path '/etc/hostname' must be relative to the task folder",
        ),
        (
            "timeout_s: 30\n",
            "timeout_s: 30\ntests_dir: ../..\n",
            "key 'tests_dir': path '../..' leaves the task folder",
        ),
        (
            "context: [src/helpers.py]",
            "context: [tests/test_toy.py]",
            "key 'context': 'tests/test_toy.py' is inside tests_dir 'tests' (tests, cases, checks and inputs are never shown)",
        ),
        (
            "annotated: [src/toy.py]",
            "annotated: [src/toy.py, tests/test_toy.py]",
            "key 'annotated': 'tests/test_toy.py' is inside tests_dir 'tests'",
        ),
        (
            "timeout_s: 30\n",
            "timeout_s: 30\ntests_dir: src\n",
            "key 'annotated': 'src/toy.py' is inside tests_dir 'src'",
        ),
    ],
    ids=[
        "unknown",
        "missing",
        "ill-typed",
        "arxiv",
        "no-paper-id",
        "paper-url",
        "date",
        "gpu",
        "id",
        "env",
        "context",
        "snippet",
        "tests",
        "annotated-leaves",
        "context-leaves",
        "context-absolute",
        "tests-dir-leaves",
        "context-is-a-test",
        "annotated-is-a-test",
        "sources-in-tests-dir",
    ],
)
def test_schema_errors(fixture_tasks, old, new, expected):
    task_dir = fixture_tasks / "toy"
    _edit(task_dir, old, new)
    with pytest.raises(TaskError) as info:
        load_task(task_dir)
    message = str(info.value)
    assert message.startswith(str(task_dir / "task.yaml"))
    assert expected in message
    assert "\n" not in message


def test_a_paper_not_on_arxiv_is_cited_by_its_url(fixture_tasks):
    from rcb_action.prompts import build_prompt

    task_dir = fixture_tasks / "toy"
    _edit(task_dir, 'arxiv: "0000.00000"', "paper_url: https://openreview.net/forum?id=U0SijGsCHJ")
    task = load_task(task_dir)
    assert task.config.arxiv is None
    assert task.config.link == "https://openreview.net/forum?id=U0SijGsCHJ"
    prompt = build_prompt(task, task.snippet_names()[0])
    assert (
        "(https://openreview.net/forum?id=U0SijGsCHJ)" in prompt.text and "arXiv" not in prompt.text
    )


def test_invalid_yaml_names_the_line(fixture_tasks):
    task_dir = fixture_tasks / "toy"
    (task_dir / "task.yaml").write_text("id: toy\ntitle: [unclosed\n")
    with pytest.raises(TaskError, match=r"task.yaml:\d+: invalid YAML"):
        load_task(task_dir)


def test_tag_error_in_task_names_the_source_line(fixture_tasks):
    source = fixture_tasks / "toy" / "src" / "toy.py"
    source.write_text(source.read_text().replace('    # </paper2code name="norm">\n', ""))
    with pytest.raises(TaskError) as info:
        load_task(fixture_tasks / "toy")
    assert str(info.value).startswith(f"{source}:")
    assert 'snippet "norm" is never closed' in str(info.value)


def test_loads_and_hashes(fixture_tasks):
    task = load_task(fixture_tasks / "toy")
    assert task.snippet_names() == ["affine", "scale", "shift", "norm", "slow sum"]
    assert [task.weight(n) for n in task.snippet_names()] == [2, 1, 1, 4, 3]
    assert "task.yaml" not in task.sandbox_files and "notes.md" not in task.sandbox_files
    assert (
        "paper.tex" not in task.sandbox_files
    )  # the vendored paper: a prompt's, never a sandbox's
    before = task.sha
    (fixture_tasks / "toy" / "tests" / "test_toy.py").write_text("# changed\n")
    assert load_task(fixture_tasks / "toy").sha != before


def test_tests_dir_at_the_task_root_may_hold_the_sources(fixture_tasks):
    # Imported ResearchCodeBench tasks keep their tests next to the annotated files.
    task_dir = fixture_tasks / "toy"
    _edit(task_dir, "timeout_s: 30\n", 'timeout_s: 30\ntests_dir: "."\n')
    task = load_task(task_dir)
    assert task.config.tests_dir == "."
    assert "src/toy.py" in task.files


def test_a_context_link_out_of_the_task_folder_is_refused(fixture_tasks, tmp_path):
    task_dir = fixture_tasks / "toy"
    outside = tmp_path / "secret.py"
    outside.write_text("x = 1\n")
    (task_dir / "src" / "link.py").symlink_to(outside)
    _edit(task_dir, "context: [src/helpers.py]", "context: [src/link.py]")
    with pytest.raises(TaskError) as info:
        load_task(task_dir)
    # Refused before task.yaml is read: a task folder holds no link at all.
    assert str(info.value) == (
        f"{task_dir / 'src' / 'link.py'} is a symbolic link: "
        "task folders hold plain files and folders only"
    )


@pytest.mark.parametrize("rel", ["task.yaml", "src/toy.py", "src/helpers.py"])
def test_a_file_that_is_not_utf8_is_named(fixture_tasks, rel):
    path = fixture_tasks / "toy" / rel
    data = path.read_bytes()
    path.write_bytes(data + b"# caf\xe9\n")
    with pytest.raises(TaskError) as info:
        load_task(fixture_tasks / "toy")
    message = str(info.value)
    assert message == f"{path}: not UTF-8 text (byte 0xe9 at offset {len(data) + 5})"


def _case_task(fixture_tasks):
    return fixture_tasks / "casetoy"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            'checks: ["checks/test_toy.py::test_scale"]',
            'tests: ["checks/test_toy.py::test_scale"]',
            "key 'snippets.scale.tests': a task with cases and checks selects 'checks'",
        ),
        (
            'checks: ["checks/test_toy.py::test_scale"]',
            'checks: ["checks/test_toy.py::test_scale"]\n    tests: ["x"]',
            "key 'snippets.scale': give either 'checks' (cases and checks) or 'tests' (in-process)",
        ),
        (
            "context: [src/helpers.py]",
            "context: [cases/cases_toy.py]",
            "key 'context': 'cases/cases_toy.py' is inside cases_dir 'cases'",
        ),
        (
            "context: [src/helpers.py]",
            "context: [checks/test_toy.py]",
            "key 'context': 'checks/test_toy.py' is inside checks_dir 'checks'",
        ),
        (
            'checks: ["checks/test_visible.py"]',
            'checks: ["src/toy.py"]',
            "key 'agent.checks': 'src/toy.py' is not under 'checks/'",
        ),
    ],
    ids=[
        "tests-in-a-cases-task",
        "both",
        "context-is-a-case",
        "context-is-a-check",
        "agent-outside",
    ],
)
def test_cases_and_checks_schema_errors(fixture_tasks, old, new, expected):
    _edit(_case_task(fixture_tasks), old, new)
    with pytest.raises(TaskError) as info:
        load_task(_case_task(fixture_tasks))
    assert expected in str(info.value)


def test_a_checks_folder_needs_a_cases_folder(fixture_tasks):
    import shutil

    shutil.rmtree(_case_task(fixture_tasks) / "cases")
    with pytest.raises(TaskError, match="key 'cases_dir': folder 'cases' not found"):
        load_task(_case_task(fixture_tasks))


def test_run_and_check_files_are_apart(fixture_tasks):
    task = load_task(_case_task(fixture_tasks))
    assert task.grading == "cases"
    assert all(not rel.startswith("checks/") for rel in task.run_files)
    assert "cases/cases_toy.py" in task.run_files and "src/toy.py" in task.run_files
    assert task.check_files == ["checks/_close.py", "checks/test_toy.py", "checks/test_visible.py"]
    assert task.tests_for("norm") == ["checks/test_toy.py::test_norm"]


def test_a_task_from_the_authors_code_names_its_commit_and_licence(fixture_tasks):
    task_dir = _case_task(fixture_tasks)
    origin = (
        "code_url: https://github.com/example/toy\n"
        "code_commit: 0123456789abcdef0123456789abcdef01234567\n"
    )
    _edit(task_dir, "kind: snippet\n", "kind: snippet\n" + origin)
    with pytest.raises(TaskError, match="key 'code_license'"):
        load_task(task_dir)
    _edit(task_dir, origin, origin + "code_license: GPL-3.0\n")
    with pytest.raises(TaskError, match="key 'code_license'"):
        load_task(task_dir)
    _edit(task_dir, "code_license: GPL-3.0\n", "code_license: MIT\n")
    with pytest.raises(TaskError, match="no LICENSE file"):
        load_task(task_dir)
    (task_dir / "LICENSE").write_text("MIT License\n")
    task = load_task(task_dir)
    assert task.config.code_license == "MIT" and "LICENSE" not in task.run_files
