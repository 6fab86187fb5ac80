"""rcb_action.github and ``rcb gh`` piece by piece: annotations, outputs, the comment upsert,
the base-branch artifact, the validation verdict's round trip, submissions, changes."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS, fenced, write_replay
from fake_github import FakeGitHub
from github import Auth, Github
from report_data import report_data, report_of
from test_action_runner import parse_output_file

from rcb_action.errors import RcbError
from rcb_action.github import (
    GitHubContext,
    annotation,
    check_submissions,
    classify_changes,
    comment_marker,
    compare_reports,
    fetch_artifact_report,
    report_from_zip,
    set_outputs,
    upsert_comment,
)
from rcb_action.github._compare import render_comparison
from rcb_action.github._verdict import fenced as fence_text

REPO = "octo/rcb"

SMALL_REPORT = report_data({"models": {"m": {"scaled_pass_at_1": 12.5, "pass_rate": 20.0, "snippets": 4, "harness_errors": 0, "tasks": {}, "failure_classes": {}, "macro_task_mean": 12.5, "ci95": [1.0, 30.0], "post_cutoff": {"cutoff": None, "scaled_pass_at_1": 12.5, "snippets": 4}, "cost_usd": 0.0}}})  # fmt: skip


@pytest.fixture
def gh_env(monkeypatch, tmp_path):
    """Point rcb at a fake API as a pull_request run on #7 would be."""

    def setup(fake: FakeGitHub, *, pull: int | None = 7) -> Path:
        event = tmp_path / "event.json"
        event.write_text(json.dumps({"pull_request": {"number": pull}} if pull else {}))
        summary = tmp_path / "summary.md"
        summary.write_text("")
        for name, value in {
            "GITHUB_EVENT_NAME": "pull_request" if pull else "push",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": fake.url,
            "GITHUB_TOKEN": "t",
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_WORKSPACE": str(tmp_path),
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
        return summary

    return setup


def test_annotation_escapes_and_points_into_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    line = annotation(
        "error", "50% done\nnext", file=str(tmp_path / "tasks/a,b/x:y.py"), line=3, title="rcb"
    )
    assert line == "::error file=tasks/a%2Cb/x%3Ay.py,line=3,title=rcb::50%25 done%0Anext"
    assert annotation("warning", "plain") == "::warning::plain"


def test_outputs_survive_newlines_and_equals_signs(tmp_path):
    path = tmp_path / "output"
    values = {"matrix": '{"a": "b=c"}', "notes": "one\ntwo", "empty": ""}
    set_outputs(values, path=str(path))
    assert parse_output_file(path) == values


def test_upsert_passes_over_a_marked_comment_it_cannot_edit():
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 7)
        spoof = gh.add_comment(REPO, 7, f"{comment_marker('k')}\nfake scores", login="mallory")
        issue = Github(base_url=gh.url, auth=Auth.Token("t")).get_repo(REPO).get_issue(7)
        first = upsert_comment(issue, "k", "scores v1")
        second = upsert_comment(issue, "k", "scores v2")
        assert (first.action, second.action) == ("created", "updated")
        assert first.id == second.id != spoof
        bodies = {c["id"]: c["body"] for c in gh.comments_on(REPO, 7)}
        assert bodies[spoof].endswith("fake scores")
        assert bodies[first.id] == f"{comment_marker('k')}\nscores v2"


def test_markers_are_one_line_and_cannot_close_early():
    assert comment_marker("a --> b\nc") == "<!-- rcb-comment: a-b-c -->"


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_report_from_zip_reads_the_report_and_refuses_others():
    report = report_data({"models": {"m": {"scaled_pass_at_1": 1.0}}})
    data = _zip({"deep/er/report.json": "{}", "report.json": json.dumps(report)})
    assert report_from_zip(data, source="a") == report_of(report)
    with pytest.raises(RcbError, match=r"^a: report\.json: schema_version missing"):
        report_from_zip(_zip({"report.json": json.dumps({"models": {}})}), source="a")
    with pytest.raises(RcbError, match=r"no report\.json"):
        report_from_zip(_zip({"other.json": "{}"}), source="a")
    with pytest.raises(RcbError, match="not a zip"):
        report_from_zip(b"nope", source="a")


def test_baseline_is_the_newest_own_unexpired_artifact_of_the_branch():
    def report(score: float) -> str:
        return json.dumps(report_data({"models": {"m": {"scaled_pass_at_1": score}}}))

    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        context = GitHubContext(repository=REPO, api_url=gh.url, token="t")
        assert fetch_artifact_report(context, "main") is None
        gh.add_artifact(REPO, "rcb-report", {"report.json": report(10.0)})
        gh.add_artifact(REPO, "rcb-report", {"report.json": report(20.0)})
        gh.add_artifact(REPO, "rcb-report", {"report.json": report(30.0)}, expired=True)
        gh.add_artifact(REPO, "rcb-report", {"report.json": report(40.0)}, from_fork=True)
        gh.add_artifact(REPO, "rcb-report", {"report.json": report(50.0)}, head_branch="dev")
        gh.add_artifact(REPO, "other", {"report.json": report(60.0)})
        found = fetch_artifact_report(context, "main")
        assert found is not None
        assert found.report.models["m"].scaled_pass_at_1 == 20.0
        assert "rcb-report" in found.source


def test_compare_reports_by_model_and_task():
    shas = {"a": "1", "gone": "2", "new": "3"}  # one benchmark: only the model moved
    base = report_of({"task_shas": shas, "models": {"m": {"scaled_pass_at_1": 50.0, "tasks": {"a": {"scaled_pass_at_1": 50.0}, "gone": {"scaled_pass_at_1": 10.0}}}}})  # fmt: skip
    now = report_of({"task_shas": shas, "models": {"m": {"scaled_pass_at_1": 60.0, "tasks": {"a": {"scaled_pass_at_1": 50.0}, "new": {"scaled_pass_at_1": 70.0}}}, "fresh": {"scaled_pass_at_1": 5.0, "tasks": {}}}})  # fmt: skip
    comparison = compare_reports(now, base)
    m = comparison.for_model("m")
    assert m is not None and m.delta == 10.0
    assert {(t.task, t.current, t.base) for t in m.tasks} == {
        ("gone", None, 10.0),
        ("new", 70.0, None),
    }
    fresh = comparison.for_model("fresh")
    assert fresh is not None and fresh.delta is None


def test_a_changed_benchmark_is_named_and_left_out_of_the_comparison():
    """A task edited, added or removed between the two runs is the benchmark's change, not
    the model's: scores are compared on the tasks whose hash is the same in both."""

    def task(score: float, weight: float = 10.0) -> dict[str, float]:
        return {"scaled_pass_at_1": score, "weight": weight}

    base = report_of({
        "task_shas": {"a": "1", "b": "2", "gone": "3"},
        "models": {"m": {"scaled_pass_at_1": 40.0, "tasks": {"a": task(50.0), "b": task(20.0, 30.0), "gone": task(90.0)}}},
    })  # fmt: skip
    now = report_of({
        "task_shas": {"a": "1", "b": "2-edited", "new": "4"},
        "models": {"m": {"scaled_pass_at_1": 20.0, "tasks": {"a": task(60.0), "b": task(0.0, 30.0), "new": task(0.0)}}},
    })  # fmt: skip
    comparison = compare_reports(now, base)
    assert comparison.changed_tasks == ["b", "gone", "new"] and comparison.common_tasks == 1
    m = comparison.for_model("m")
    # Only task a is the same benchmark in both: 50 -> 60, not 40 -> 20.
    assert m is not None and (m.base, m.current, m.delta) == (50.0, 60.0, 10.0)
    assert [(t.task, t.base, t.current) for t in m.tasks] == [("a", 50.0, 60.0)]
    text = render_comparison(comparison)
    assert "The benchmark changed: 3 task(s) are new, removed or edited (b, gone, new)" in text
    assert "compared on the 1 task(s) identical in both runs" in text


def _report_of(passes: dict[str, list[int]], shas: dict[str, str]) -> dict:
    """A report whose model m scored each task's 10 snippets (weight 5 each) as given."""
    outcomes = [
        [task, f"s{i}", 0, 5, ok] for task, oks in passes.items() for i, ok in enumerate(oks)
    ]
    tasks = {t: {"scaled_pass_at_1": 10.0 * sum(oks), "weight": 50} for t, oks in passes.items()}
    total = sum(sum(oks) for oks in passes.values()) / sum(len(oks) for oks in passes.values())
    return report_data({
        "task_shas": shas,
        "models": {"m": {"scaled_pass_at_1": 100.0 * total, "tasks": tasks, "outcomes": outcomes}},
    })  # fmt: skip


def test_a_regression_gate_on_the_paired_interval_of_identical_tasks(tmp_path, cli):
    from rcb_action.github import regressions

    base = _report_of({"a": [1] * 10, "b": [1] * 10, "c": [0] * 10}, {"a": "1", "b": "2", "c": "3"})
    worse = _report_of({"a": [0] * 8 + [1] * 2, "b": [0] * 7 + [1] * 3, "c": [1] * 10}, {"a": "1", "b": "2", "c": "3-edited"})  # fmt: skip
    comparison = compare_reports(report_of(worse), report_of(base))
    paired = comparison.for_model("m").paired
    # Task c changed: left out. On a and b the model lost 15 of 20 snippets: -75 points.
    assert paired is not None and paired["snippets"] == 20 and paired["difference"] == -75.0
    assert paired["ci95_high"] < -50
    assert regressions(comparison, 10) and not regressions(comparison, 100)
    assert "paired 95% interval" in render_comparison(comparison)
    same = compare_reports(report_of(base), report_of(base))
    assert same.for_model("m").paired["difference"] == 0.0 and not regressions(same, 0)

    paths = {}
    for name, report in (("base", base), ("worse", worse)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(report))
    gate = ("gh", "gate", "--report", paths["worse"], "--baseline", paths["base"])
    code, _, err = cli(*gate, "--fail-on-regression", "10")
    assert code == 1 and "rcb: regression: m: -75.0 points on 20 snippets" in err
    assert cli(*gate, "--fail-on-regression", "100")[0] == 0
    assert cli(*gate, "--fail-on-regression", "")[0] == 0  # not asked for
    code, _, err = cli("gh", "gate", "--report", paths["worse"], "--baseline", "", "--fail-on-regression", "5")  # fmt: skip
    assert code == 0 and "nothing to compare" in err
    code, _, err = cli(*gate, "--fail-on-regression", "ten")
    assert code == 2 and err.count("\n") == 1 and "--fail-on-regression: 'ten'" in err


def test_a_fence_no_line_of_the_text_can_close():
    text = "before\n```\nescaped?\n````\n"
    block = fence_text(text)
    assert block.startswith("`````text\n") and block.endswith("\n`````\n")


def test_verdict_round_trip_through_the_trusted_commenter(tmp_path, cli, gh_env):
    head = "a" * 40
    log = tmp_path / "validate.log"
    log.write_text("FAIL  toy: 1 problem(s)\n  tasks/toy/task.yaml: unknown key 'x'\n")
    code, _, _ = cli(
        "gh", "verdict", "--out", tmp_path / "verdict", "--pr", "7", "--head-sha", head,
        "--tasks", "tasks/toy", "--validate-status", "1", "--validate-log", log,
    )  # fmt: skip
    assert code == 0
    path = tmp_path / "verdict" / "verdict.json"
    data = json.loads(path.read_text())
    assert data["pull"] == 7 and data["head_sha"] == head
    assert data["tasks"]["items"]["tasks/toy"] == {
        "status": "failed",
        "problems": ["tasks/toy/task.yaml: unknown key 'x'"],
    }
    args = ("gh", "comment", "--strict", "--verdict-file", path)
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 7, head_sha=head)
        gh.add_pull(REPO, 8, head_sha="b" * 40)
        gh_env(gh, pull=None)  # a workflow_run event names no pull request itself

        assert cli(*args, "--head-sha", "c" * 40)[0] == 2  # not the validated commit
        run_url = "https://github.com/octo/rcb/actions/runs/1"
        assert cli(*args, "--head-sha", head, "--run-url", run_url)[0] == 0
        posted = gh.comments_on(REPO, 7)
        assert len(posted) == 1
        body = posted[0]["body"]
        assert body.startswith(comment_marker("validation") + "\n### rcb: pull-request validation")
        assert "needs changes" in body and "unknown key 'x'" in body
        assert f"[Validation run]({run_url})" in body
        assert cli(*args, "--head-sha", head)[0] == 0
        assert len(gh.comments_on(REPO, 7)) == 1

        # The pull request moved on since: the stale verdict is not posted.
        data["pull"] = 8
        path.write_text(json.dumps(data))
        code, _, err = cli(*args, "--head-sha", head)
        assert code == 0 and "moved on" in err
        assert gh.comments_on(REPO, 8) == []

        # Markdown where the verdict should be: refused in one line, nothing posted.
        path.write_text(f"{comment_marker('validation')}\n### ✅ ready for review\n")
        code, _, err = cli(*args, "--head-sha", head)
        assert code == 2 and "not a verdict" in err and err.count("\n") == 1
        assert len(gh.comments_on(REPO, 7)) == 1


def test_summary_and_comment_commands_off_a_pull_request(tmp_path, cli, gh_env):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(SMALL_REPORT))
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        summary = gh_env(gh, pull=None)
        assert cli("gh", "summary", "--report", path)[0] == 0
        assert "| m | **12.5** [1.0, 30.0] |" in summary.read_text()
        code, _, err = cli("gh", "comment", "--report", path)
        assert code == 0 and "not a pull request" in err
        assert cli("gh", "comment", "--report", path, "--enabled", "maybe")[0] == 2
    assert not [c for c in gh.calls if "comments" in c.path]


def test_validate_prints_annotations(tmp_path, fixture_tasks, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    yaml_path = fixture_tasks / "toy" / "task.yaml"
    yaml_path.write_text(yaml_path.read_text() + "colour: blue\n")
    code, out, _ = cli("validate", "--annotations", fixture_tasks / "toy")
    assert code == 1
    assert "::error file=tasks/toy/task.yaml::unknown key 'colour'" in out


def _submission(root: Path, slug: str, model: str, rows: list[dict], cutoff: bool = True) -> Path:
    folder = root / slug
    folder.mkdir(parents=True)
    cutoff_line = "    knowledge_cutoff: 2025-01-01\n" if cutoff else ""
    (folder / "model.yaml").write_text(
        f"models:\n  {model}:\n    display_name: X\n    provider: acme\n{cutoff_line}"
    )
    write_replay(folder / "completions.jsonl", rows)
    return folder


def test_submission_checks(tmp_path):
    good_row = {"task": "toy", "snippet": "scale", "model": "acme/x", "completion": fenced("y = a * x")}  # fmt: skip
    good = _submission(tmp_path, "acme-x", "acme/x", [good_row])
    found, problems = check_submissions([good], FIXTURE_TASKS)
    assert problems == [] and [s.model for s in found] == ["acme/x"]
    assert found[0].spec == f"replay:{good.as_posix()}/completions.jsonl"

    bad = _submission(
        tmp_path,
        "acme-y",
        "acme/y",
        [
            {**good_row, "model": "someone/else"},
            {**good_row, "model": "acme/y", "snippet": "no such snippet"},
            {**good_row, "model": "acme/y", "task": "no-such-task"},
        ],
        cutoff=False,
    )
    twin = _submission(tmp_path, "acme-x-again", "acme/x", [good_row])
    reserved = _submission(tmp_path, "ref", "reference", [{**good_row, "model": "reference"}])
    found, problems = check_submissions([good, bad, twin, reserved], FIXTURE_TASKS)
    assert [s.model for s in found] == ["acme/x"]
    located = {(Path(p.path).name, p.line) for p in problems}
    assert {("completions.jsonl", 1), ("completions.jsonl", 2), ("completions.jsonl", 3)} <= located
    messages = " | ".join(p.message for p in problems)
    for expected in ("knowledge_cutoff", "also submitted in", "is reserved", "no snippet named"):
        assert expected in messages


def test_changed_tasks_and_submissions_from_git(tmp_path, cli, monkeypatch):
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    shutil.copytree(FIXTURE_TASKS / "toy", tmp_path / "tasks" / "toy")
    shutil.copytree(FIXTURE_TASKS / "toy", tmp_path / "tasks" / "other")
    (tmp_path / "tasks" / "other" / "task.yaml").write_text(
        (tmp_path / "tasks" / "other" / "task.yaml").read_text().replace("id: toy", "id: other")
    )
    shutil.copytree(FIXTURE_TASKS / "_envs", tmp_path / "tasks" / "_envs")
    (tmp_path / "tasks" / "gone").mkdir()
    (tmp_path / "tasks" / "gone" / "task.yaml").write_text("id: gone\n")
    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    git("rev-parse", "HEAD")
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.strip()
    # Change one task's env (touches every task using it), delete one, add a submission.
    (tmp_path / "tasks" / "_envs" / "numpy" / "requirements.txt").write_text("numpy\n")
    shutil.rmtree(tmp_path / "tasks" / "gone")
    (tmp_path / "submissions" / "acme-x").mkdir(parents=True)
    (tmp_path / "submissions" / "acme-x" / "model.yaml").write_text("models: {}\n")
    (tmp_path / "submissions" / "README.md").write_text("docs\n")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "change")
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "out.txt"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    assert cli("gh", "changed", "--base", base)[0] == 0
    values = parse_output_file(output)
    assert values["tasks"] == "tasks/other tasks/toy"
    assert values["submissions"] == "submissions/acme-x"
    assert values["models"] == "replay:submissions/acme-x/completions.jsonl"
    assert values["registries"] == "submissions/acme-x/model.yaml"


def test_odd_folder_names_are_problems_not_words():
    changes = classify_changes(
        ["tasks/a b/task.yaml", "tasks/$(x)/f", "submissions/ok-1/model.yaml", "README.md"],
        root=Path("/nonexistent"),
    )
    assert changes.tasks == [] and changes.submissions == []
    assert len(changes.problems) == 2


def test_comment_keys_keep_separate_comments(tmp_path, cli, gh_env, monkeypatch):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(SMALL_REPORT))
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 7)
        gh_env(gh)
        monkeypatch.setenv("GITHUB_JOB", "score")
        for key in ("with-paper", "without-paper", "with-paper"):
            assert cli("gh", "comment", "--report", path, "--key", key)[0] == 0
        # No key: one derived from the workflow, job, models and shard, stable across runs.
        for _ in range(2):
            assert cli("gh", "comment", "--report", path, "--shard", "1/2")[0] == 0
        firsts = [c["body"].splitlines()[0] for c in gh.comments_on(REPO, 7)]
        assert firsts[:2] == [comment_marker("with-paper"), comment_marker("without-paper")]
        assert len(firsts) == 3 and firsts[2].startswith("<!-- rcb-comment: score-")


def test_a_read_only_token_warns_and_does_not_fail(tmp_path, cli, gh_env):
    """A pull request from a fork gets a read-only token: the job must not fail on it."""
    path = tmp_path / "report.json"
    path.write_text(json.dumps(SMALL_REPORT))
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 7)
        gh.refuse_writes = True
        gh_env(gh)
        code, out, _ = cli("gh", "comment", "--report", path)
        assert code == 0
        assert "::warning title=rcb::the pull-request comment was not posted: API 403" in out
        assert cli("gh", "comment", "--report", path, "--strict")[0] == 2
        assert gh.comments_on(REPO, 7) == []
