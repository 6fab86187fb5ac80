"""Releases: the tag check, the notes from CHANGELOG.md, and the thin action repository
(rcb/evaluate) built from a real source distribution and run by the local runner."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURE_TASKS, ROOT
from fake_github import FakeGitHub
from test_action import REPO, github_env
from test_action_runner import run_action

from rcb_action import __version__
from rcb_action.errors import RcbError
from rcb_action.github import changelog_notes, check_release, thin_action, version_of_tag

CHANGELOG = """# Changelog

## [1.2.0] - 2026-12-01

### Added
- shards

## [1.1.0] - 2026-11-01

- the first
"""


def test_notes_are_the_versions_section():
    assert changelog_notes(CHANGELOG, "1.2.0") == "### Added\n- shards\n"
    assert changelog_notes(CHANGELOG, "1.1.0") == "- the first\n"
    with pytest.raises(RcbError, match=r"no section '## \[1.3.0\]"):
        changelog_notes(CHANGELOG, "1.3.0")
    with pytest.raises(RcbError, match=r"vX\.Y\.Z"):
        version_of_tag("v1.2")


def test_the_tag_must_agree_with_the_package_and_the_changelog(tmp_path):
    assert check_release(f"v{__version__}", ROOT) == __version__
    with pytest.raises(RcbError, match=r"pyproject\.toml: version is"):
        check_release("v99.0.0", ROOT)
    for name in ("pyproject.toml", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    text = (tmp_path / "CHANGELOG.md").read_text()
    (tmp_path / "CHANGELOG.md").write_text(text.replace(f"## [{__version__}]", "## [0.0.1]"))
    with pytest.raises(RcbError, match=rf"CHANGELOG.md: no section '## \[{__version__}\]"):
        check_release(f"v{__version__}", tmp_path)


def test_the_thin_action_uses_the_fetched_release_everywhere():
    text = thin_action((ROOT / "action.yml").read_text(), "1.2.0", "ab" * 32)
    spec = yaml.safe_load(text)
    assert "$GITHUB_ACTION_PATH" not in text
    assert spec["inputs"]["rcb-source"]["default"].endswith("/rcb/rcb-1.2.0.tar.gz")
    steps = spec["runs"]["steps"]
    assert steps[0]["id"] == "rcb-source" and "ab" * 32 in steps[0]["run"]
    for step in steps:
        if "$RCB_HOME" in str(step.get("run", "")):
            assert step["env"]["RCB_HOME"] == "${{ steps.rcb-source.outputs.home }}", step["name"]


def build_sdist(tmp_path: Path) -> Path:
    """rcb's source distribution, built from the files git tracks (or would track)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    source = tmp_path / "source"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-c", "from setuptools import build_meta as b; b.build_sdist('dist')"],
        cwd=source, check=True, capture_output=True,
    )  # fmt: skip
    return next((source / "dist").glob("rcb-*.tar.gz"))


@pytest.mark.slow
def test_the_thin_action_repository_runs_the_pinned_release(tmp_path, cli):
    sdist = build_sdist(tmp_path)
    thin = tmp_path / "evaluate"
    code, _, err = cli("release", "action", "--sdist", sdist, "--out", thin, "--root", ROOT)
    assert code == 0, err
    assert sorted(p.name for p in thin.iterdir()) == ["LICENSE", "README.md", "action.yml"]

    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    inputs = {
        "models": "reference", "tasks": "toy", "tasks-dir": str(FIXTURE_TASKS),
        "sandbox": "local", "workers": "2", "rcb-source": sdist.as_uri(),
    }  # fmt: skip
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        env = github_env(tmp_path, gh, pull=None)
        env |= {"RUNNER_TEMP": str(runner_temp), "RCB_CACHE_DIR": str(tmp_path / "cache")}
        run = run_action(thin, inputs, env, tmp_path)
        assert run.exit_code == 0, run.log
        home = run.step(f"Fetch rcb {sdist.name[4:-7]}").outputs["home"]
        assert (Path(home) / "tasks" / "README.md").is_file()
        assert run.step("Install rcb").outputs["rcb"] == str(
            runner_temp / "rcb-venv" / "bin" / "rcb"
        )
        assert run.outputs["scaled-pass-rate"] == "100.00"

        # Another file where the release should be: refused before anything runs.
        forged = tmp_path / sdist.name
        forged.write_bytes(sdist.read_bytes() + b"\0")
        run = run_action(thin, {**inputs, "rcb-source": forged.as_uri()}, env, tmp_path)
        assert run.exit_code == 2
        assert "sha256 mismatch" in run.steps[0].stdout
        assert [s.name for s in run.steps if s.ran] == [run.steps[0].name]


def small_sdist(tmp_path: Path, version: str) -> Path:
    """A stand-in rcb-X.Y.Z.tar.gz holding what the thin repository checks for."""
    root = tmp_path / "sd" / f"rcb-{version}"
    for name in ("action.yml", "requirements/action.txt", "tasks/README.md", "LICENSE"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    path = tmp_path / f"rcb-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(root, arcname=root.name)
    return path


def test_publish_makes_the_release_once_and_moves_the_major_tag(tmp_path, cli, monkeypatch):
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / f"rcb-{__version__}.tar.gz").write_bytes(b"sdist bytes")
    (dist / f"rcb-{__version__}-py3-none-any.whl").write_bytes(b"wheel bytes")
    commit = "c" * 40
    tag = f"v{__version__}"
    with FakeGitHub() as gh:
        gh.add_repo("rcb/rcb")
        gh.add_tag("rcb/rcb", tag, commit, annotated=True)
        gh.add_tag("rcb/rcb", "v0", "b" * 40)  # the previous release's
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_release")
        monkeypatch.setenv("GITHUB_REPOSITORY", "rcb/rcb")
        for _ in range(2):  # a rerun uploads nothing twice
            code, _, err = cli("release", "publish", "--tag", tag, "--dist", dist, "--root", ROOT)
            assert code == 0, err
        repo = gh.repos["rcb/rcb"]
        [release] = repo.releases.values()
        assert release["name"] == f"rcb {__version__}"
        notes = changelog_notes((ROOT / "CHANGELOG.md").read_text(), __version__)
        assert release["body"].strip() == notes.strip()
        uploaded = {a["name"]: a["data"] for a in repo.assets[release["id"]]}
        assert uploaded == {p.name: p.read_bytes() for p in dist.iterdir()}
        assert repo.refs[f"tags/v{__version__.split('.')[0]}"] == commit
        assert repo.refs[f"tags/{tag}"] != commit  # the annotated tag itself is untouched

        code, _, err = cli("release", "publish", "--tag", "v9.9.9", "--dist", dist)
        assert code == 2 and "CHANGELOG.md: no section '## [9.9.9]" in err


def test_push_action_commits_exactly_the_thin_files_and_tags_them(tmp_path, cli, monkeypatch):
    version = "1.4.0"
    thin = tmp_path / "thin"
    code, _, err = cli(
        "release", "action", "--sdist", small_sdist(tmp_path, version), "--out", thin,
        "--root", ROOT,
    )  # fmt: skip
    assert code == 0, err
    with FakeGitHub() as gh:
        gh.add_repo("rcb/evaluate")
        # What the repository held before: an old release, and a stray workflow file.
        gh.repos["rcb/evaluate"].refs["heads/main"] = "e" * 40
        gh.repos["rcb/evaluate"].objects["e" * 40] = {
            "sha": "e" * 40, "message": "old", "parents": [],
            "tree": {"sha": "f" * 40, "url": ""},
        }  # fmt: skip
        gh.repos["rcb/evaluate"].objects["f" * 40] = {
            "sha": "f" * 40, "tree": [{"path": ".github/workflows/x.yml", "content": "on: push"}],
        }  # fmt: skip
        gh.add_tag("rcb/evaluate", "v1", "e" * 40)
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        monkeypatch.delenv("RCB_ACTION_REPO_TOKEN", raising=False)
        command = ("release", "push-action", "--tag", f"v{version}", "--files", thin)
        code, _, err = cli(*command)
        assert code == 2 and "RCB_ACTION_REPO_TOKEN is not set" in err

        monkeypatch.setenv("RCB_ACTION_REPO_TOKEN", "ghs_app")
        code, _, err = cli(*command)
        assert code == 0, err
        repo = gh.repos["rcb/evaluate"]
        head = repo.refs["heads/main"]
        assert repo.objects[head]["parents"] == [{"sha": "e" * 40}]
        files = gh.tree_of("rcb/evaluate", "heads/main")
        assert sorted(files) == ["LICENSE", "README.md", "action.yml"]
        assert files["action.yml"] == (thin / "action.yml").read_text()
        assert repo.refs[f"tags/v{version}"] == repo.refs["tags/v1"] == head

        code, _, err = cli(*command)  # a rerun: the same tree, no new commit
        assert code == 0, err
        assert repo.refs["heads/main"] == head
        (thin / "README.md").write_text("changed")  # another tree under the same tag: refused
        code, _, err = cli(*command)
        assert code == 2 and f"v{version} exists with other files" in err
        assert repo.refs["heads/main"] == head  # refused before anything moved
