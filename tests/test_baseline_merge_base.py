"""The base branch's report a pull request is compared with: the one made at the merge
base, else the newest, said plainly, and never a fork's."""

from __future__ import annotations

import json

import pytest
from fake_github import FakeGitHub
from github import Auth, Github
from report_data import report_data

from rcb_action.github import GitHubContext, fetch_artifact_report

REPO = "octo/rcb"
PR = 7
HEAD = "a" * 40
MERGE_BASE = "b" * 40
LATER = "c" * 40


def report(score: float) -> str:
    return json.dumps(report_data({"models": {"m": {"scaled_pass_at_1": score}}}))


def context(gh: FakeGitHub, event: dict | None = None) -> GitHubContext:
    return GitHubContext(repository=REPO, api_url=gh.url, token="t", event=event or {})


@pytest.fixture
def gh():
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        fake.add_pull(REPO, PR, head_sha=HEAD, base_ref="main")
        fake.set_merge_base(REPO, "main", HEAD, MERGE_BASE)
        yield fake


def test_the_fake_compares_two_commits(gh):
    repo = Github(base_url=gh.url, auth=Auth.Token("t")).get_repo(REPO)
    assert repo.compare("main", HEAD).merge_base_commit.sha == MERGE_BASE
    assert repo.compare("main", "d" * 40).merge_base_commit.sha == "1" * 40  # the default


def test_the_report_made_at_the_merge_base_is_chosen_over_a_newer_one(gh):
    gh.add_artifact(REPO, "rcb-report", {"report.json": report(10.0)}, head_sha=MERGE_BASE)
    gh.add_artifact(REPO, "rcb-report", {"report.json": report(20.0)}, head_sha=LATER)
    # The head found from the pull request (a workflow_run job's pr-number), or the event's.
    for found in (
        fetch_artifact_report(context(gh), "main", pull=PR),
        fetch_artifact_report(context(gh, {"pull_request": {"head": {"sha": HEAD}}}), "main"),
    ):
        assert found is not None
        assert found.report.models["m"].scaled_pass_at_1 == 10.0
        assert found.source.startswith("main at bbbbbbb (the merge base), artifact rcb-report")


def test_without_a_report_at_the_merge_base_the_newest_is_used_and_said_so(gh, tmp_path, cli):
    gh.add_artifact(REPO, "rcb-report", {"report.json": report(10.0)}, head_sha="e" * 40)
    gh.add_artifact(REPO, "rcb-report", {"report.json": report(20.0)}, head_sha=LATER)
    found = fetch_artifact_report(context(gh), "main", pull=PR)
    assert found is not None and found.report.models["m"].scaled_pass_at_1 == 20.0
    said = "main at ccccccc (newest; no report for the merge base bbbbbbb)"
    assert found.source.startswith(said)

    # The same words reach the job summary through `rcb gh baseline` and `rcb gh summary`.
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR, "base": {"ref": "main"}}}))
    summary = tmp_path / "summary.md"
    summary.write_text("")
    with pytest.MonkeyPatch.context() as mp:
        for name, value in {
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": gh.url,
            "GITHUB_TOKEN": "t",
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(tmp_path / "output"),
        }.items():
            mp.setenv(name, value)
        mp.delenv("GITHUB_BASE_REF", raising=False)
        base = tmp_path / "baseline.json"
        code, _, err = cli("gh", "baseline", "--pr", str(PR), "--out", base)
        assert code == 0 and said in err
        current = tmp_path / "current.json"
        current.write_text(report(25.0))
        assert cli("gh", "summary", "--report", current, "--baseline", base)[0] == 0
    text = summary.read_text()
    assert "Compared with the base branch" in text
    assert "no report for the merge base bbbbbbb" in text


def test_a_forks_run_at_the_merge_base_is_ignored(gh):
    gh.add_artifact(REPO, "rcb-report", {"report.json": report(10.0)}, head_sha=LATER)
    gh.add_artifact(
        REPO, "rcb-report", {"report.json": report(99.0)}, head_sha=MERGE_BASE, from_fork=True
    )
    found = fetch_artifact_report(context(gh), "main", pull=PR)
    assert found is not None and found.report.models["m"].scaled_pass_at_1 == 10.0
    assert "(newest; no report for the merge base bbbbbbb)" in found.source


def test_an_unreadable_merge_base_falls_back_to_the_newest_and_says_why(gh):
    gh.set_merge_base(REPO, "main", HEAD, None)  # no common ancestor: GitHub answers 404
    gh.add_artifact(REPO, "rcb-report", {"report.json": report(10.0)}, head_sha=LATER)
    found = fetch_artifact_report(context(gh), "main", head_sha=HEAD)
    assert found is not None
    assert found.source.startswith("main at ccccccc (newest; the merge base could not be read")
    # No head known at all (a push, or --branch alone): the newest, said so too.
    unknown = fetch_artifact_report(context(gh), "main")
    assert unknown is not None and "the pull request's head is unknown" in unknown.source
