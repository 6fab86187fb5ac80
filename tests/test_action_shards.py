"""Forks and shards: shard legs with ``comment: false`` neither comment nor gate, a
``mode: merge`` job joins them, comments once and gates on the merged scores, a
``workflow_run`` job names its pull request with ``pr-number``, a fork's pull request
scores what needs no key and says so, and the recipes in docs/recipes/ pass actionlint.

The toy task is scored once (in-process); each shard leg's results folder is that
run's records of its shard, so the Action's legs resume and run no test. The toy
model's scaled pass@1 is 57.1 on shard 1/2 (norm passes, affine and shift have no
answer), 25.0 on shard 2/2 (scale passes, slow sum has none) and 45.5 merged.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURE_TASKS, ROOT, fenced, write_replay
from fake_github import FakeGitHub
from test_action import MODEL, PR, REPO, act, github_env
from test_action_runner import ActionRun
from test_workflows_lint import run_actionlint
from test_workflows_security import load, secrets_in_pull_request_jobs, untrusted_checkouts

from rcb_action.cli import main
from rcb_action.runner import in_shard

RECIPES = ROOT / "docs" / "recipes"
HEAD = "c0ffee" + "0" * 34
SHARD_SCORES = {"1/2": 57.14, "2/2": 25.0}
MERGED = 45.45


@dataclass
class Scored:
    replay: Path
    results: Path


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Scored:
    root = tmp_path_factory.mktemp("scored")
    replay = write_replay(
        root / "completions.jsonl",
        [
            {"task": "toy", "snippet": "scale", "model": MODEL, "completion": fenced("y = a * x")},
            {"task": "toy", "snippet": "norm", "model": MODEL, "completion": fenced("return 5.0")},
        ],
    )
    results = root / "results"
    code = main(
        ["evaluate", "--model", f"replay:{replay}", "--tasks-dir", str(FIXTURE_TASKS),
         "--tasks", "toy", "--out", str(results), "--no-progress", "--workers", "2"]
    )  # fmt: skip
    assert code == 0
    return Scored(replay, results)


def shard_results(scored: Scored, shard: str, target: Path) -> Path:
    """The scored run's records of one shard, as that leg would have left them."""
    index, count = (int(n) for n in shard.split("/"))
    shutil.copytree(scored.results, target)
    lines = (scored.results / "results.jsonl").read_text().splitlines(keepends=True)
    kept = [
        line
        for line in lines
        if in_shard(json.loads(line)["task"], json.loads(line)["snippet"], (index, count))
    ]
    (target / "results.jsonl").write_text("".join(kept))
    return target


def leg_inputs(scored: Scored, results: Path, **extra: str) -> dict[str, str]:
    return {
        "models": f"replay:{scored.replay}",
        "tasks": "toy",
        "tasks-dir": str(FIXTURE_TASKS),
        "results-dir": str(results),
        "workers": "2",
        "sandbox": "local",
        **extra,
    }


def workflow_run_env(workdir: Path, gh: FakeGitHub) -> dict[str, str]:
    """A ``workflow_run`` job's variables: the event names no pull request (as for a fork)."""
    env = github_env(workdir, gh, pull=None)
    event = workdir / "workflow_run.json"
    event.write_text(
        json.dumps({"workflow_run": {"id": 99, "head_sha": HEAD, "pull_requests": []}})
    )
    return {**env, "GITHUB_EVENT_NAME": "workflow_run", "GITHUB_EVENT_PATH": str(event)}


def comment_writes(gh: FakeGitHub) -> list[str]:
    return [c.method for c in gh.calls if "comments" in c.path and c.method != "GET"]


def run_leg(scored: Scored, gh: FakeGitHub, shard: str, workdir: Path) -> ActionRun:
    """One leg of the matrix: its shard, comment false, and a fail-under of 50 that one
    of the two shards alone is below."""
    workdir.mkdir()
    results = shard_results(scored, shard, workdir / "rcb-results")
    inputs = leg_inputs(scored, results, shard=shard, comment="false", **{"fail-under": "50"})
    return act(workdir, inputs, github_env(workdir, gh))


def test_shard_legs_do_not_comment_or_gate_and_the_merge_comments_once_and_gates(
    tmp_path, scored, cli
):
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, PR, head_sha=HEAD, base_ref="main")
        gh.add_pull(REPO, PR + 1, head_sha="b" * 40)

        # The two legs, at once as a matrix runs them: partial data, so neither gates.
        legs = {shard: tmp_path / f"leg{i}" for i, shard in enumerate(SHARD_SCORES, 1)}
        with ThreadPoolExecutor(len(legs)) as pool:
            started = {
                shard: pool.submit(run_leg, scored, gh, shard, legs[shard]) for shard in legs
            }
            runs = {shard: future.result() for shard, future in started.items()}
        shards = tmp_path / "runner-temp" / "rcb-shards"
        for i, (shard, run) in enumerate(runs.items(), 1):
            assert run.exit_code == 0, run.log  # 2/2 scores 25.0, below fail-under 50
            assert float(run.outputs["scaled-pass-rate"]) == pytest.approx(
                SHARD_SCORES[shard], abs=0.01
            )
            for step in ("Find the base branch's results", "Regression gate"):
                assert not run.step(step).ran
            assert "comment disabled" in run.step("Pull-request comment").stderr
            summary = (legs[shard] / "summary.md").read_text()
            assert "neither `fail-under` nor `fail-on-regression` is applied" in summary
            # The leg's upload: one artifact, downloaded by the merge into a folder of its own.
            shutil.copytree(run.outputs["results-path"], shards / f"rcb-shard-{i}")
        assert comment_writes(gh) == []
        assert not [c for c in gh.calls if "artifacts" in c.path]

        # The merge: a workflow_run job names the pull request (pr-number) and the commit.
        base_report = tmp_path / "base.json"
        assert main(["report", str(scored.results), "--json", str(base_report), "--quiet"]) == 0
        lowered = json.loads(base_report.read_text())
        entry = lowered["models"][MODEL]
        entry["scaled_pass_at_1"] = entry["tasks"]["toy"]["scaled_pass_at_1"] = 35.45
        gh.add_artifact(REPO, "rcb-report", {"report.json": json.dumps(lowered)})
        merge = tmp_path / "merge"
        merge.mkdir()
        env = {**workflow_run_env(merge, gh), "RUNNER_TEMP": str(tmp_path / "runner-temp")}
        inputs = {
            "mode": "merge",
            "pr-number": str(PR),
            "head-sha": HEAD,
            "results-dir": str(merge / "rcb-results"),
            "fail-under": "50",
        }
        run = act(merge, inputs, env)
        # 45.5 merged: below 50, though shard 1/2 alone (57.1) was above it.
        assert run.exit_code == 1, run.log
        assert run.step("Pull-request comment").returncode == 0
        assert run.step("Verdict").returncode == 1
        assert not run.step("Where the papers are cached").ran
        assert float(run.outputs["scaled-pass-rate"]) == pytest.approx(MERGED, abs=0.01)
        posted = gh.comments_on(REPO, PR)
        assert len(posted) == 1 and comment_writes(gh) == ["POST"]
        row = next(ln for ln in posted[0]["body"].splitlines() if ln.startswith(f"| {MODEL} |"))
        assert "**45.5**" in row and row.endswith("| +10.0 |")  # against #7's base branch

        # A number read from an artifact cannot aim the comment at another pull request:
        # with head-sha, it is posted only where the head is that commit.
        report = run.outputs["report-path"]
        with pytest.MonkeyPatch.context() as mp:
            for name, value in {**env, "GITHUB_TOKEN": "t"}.items():
                mp.setenv(name, value)
            comment = ("gh", "comment", "--report", report, "--head-sha", HEAD)
            code, _, err = cli(*comment, "--pr", PR + 1)
            assert code == 0 and "moved on" in err
            # Without pr-number a workflow_run event names no pull request: no comment.
            code, _, err = cli("gh", "comment", "--report", report)
            assert code == 0 and "not a pull request" in err
        assert gh.comments_on(REPO, PR + 1) == [] and comment_writes(gh) == ["POST"]

    # The same shards under fail-under 40: the merge passes, though shard 2/2 (25.0) alone
    # would not have.
    code, out, _ = cli(
        "gh", "evaluate", "--mode", "merge", "--shards", shards, "--fail-under", "40",
        "--results-dir", tmp_path / "merged-40",
    )  # fmt: skip
    assert code == 0 and "below --fail-under" not in out


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"pr-number": "7a"}, "input 'pr-number': '7a' is not a pull-request number of at least 1"),
        ({"pr-number": "0"}, "input 'pr-number': '0' is not a pull-request number of at least 1"),
        ({"run-id": "latest"}, "input 'run-id': 'latest' is not a workflow run id of at least 1"),
        ({"mode": "join"}, "input 'mode': 'join' is not one of evaluate, merge"),
        ({"comment": "maybe"}, "input 'comment': 'maybe' is not true or false"),
        ({"mode": "merge", "shard": "1/2"}, "input 'shard': '1/2' with mode: merge"),
    ],
)
def test_a_bad_input_is_one_line_before_anything_runs(cli, inputs, message):
    args = [f"--{name}={value}" for name, value in inputs.items()]
    code, out, err = cli("gh", "inputs", *args)
    assert code == 2
    assert err.count("\n") == 1 and message in err
    assert out.startswith("::error title=rcb::input '")


def test_the_action_stops_at_a_bad_pr_number(tmp_path, scored):
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        results = tmp_path / "rcb-results"
        run: ActionRun = act(
            tmp_path,
            leg_inputs(scored, results, **{"pr-number": "#7"}),
            workflow_run_env(tmp_path, gh),
        )
        assert run.exit_code == 2
        assert [s.name for s in run.steps if s.ran][-1] == "What this run does"
        step = run.step("What this run does")
        assert step.stderr == "rcb: error: input 'pr-number': '#7' is not a pull-request number of at least 1\n"  # fmt: skip
        assert not results.exists() and gh.calls == []


def fork_event(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pull_request event from a fork, and an empty key (an unset secret's value)."""
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"pull_request": {
            "number": PR,
            "head": {"repo": {"full_name": "mallory/paper-models"}},
            "base": {"ref": "main", "repo": {"full_name": REPO}},
        }})
    )  # fmt: skip
    summary = tmp_path / "summary.md"
    summary.write_text("")
    for name, value in {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "OPENAI_API_KEY": "",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("GITHUB_ACTION_REPOSITORY", "GITHUB_ACTION_REF", "GITHUB_ACTION_PATH"):
        monkeypatch.delenv(name, raising=False)
    return summary


def test_a_fork_scores_what_needs_no_key_and_says_so(tmp_path, scored, cli, monkeypatch):
    summary = fork_event(tmp_path, monkeypatch)
    docs = f"https://github.com/{REPO}/blob/main/README.md#pull-requests-from-forks"
    evaluate = ("gh", "evaluate", "--tasks-dir", FIXTURE_TASKS, "--tasks", "toy", "--workers", "2")

    # Nothing it can score: exit 0, not 2, and the summary says why in one line.
    code, out, err = cli(*evaluate, "--models", "openai/gpt-4o-mini", "--results-dir", tmp_path / "none")  # fmt: skip
    assert code == 0, err
    assert "::notice title=rcb::A pull request from a fork gets no secrets" in out
    line = next(ln for ln in summary.read_text().splitlines() if "fork" in ln)
    assert "openai/gpt-4o-mini not scored (nothing scored)" in line and line.endswith(docs)
    assert not (tmp_path / "none").exists()

    # A key-free model beside it is scored (a replay file committed in the pull request).
    results = tmp_path / "rcb-results"
    shutil.copytree(scored.results, results)
    models = f"openai/gpt-4o-mini\nreplay:{scored.replay}"
    code, _, err = cli(*evaluate, "--models", models, "--results-dir", results)
    assert code == 0, err
    report = json.loads((results / "report.json").read_text())
    assert list(report["models"]) == [MODEL]
    outputs = (tmp_path / "output").read_text()
    assert f"openai/gpt-4o-mini not scored (scored replay:{scored.replay} only)" in outputs


def test_the_recipes_pass_actionlint_and_keep_the_pull_requests_code_away_from_secrets():
    recipes = sorted(RECIPES.glob("*.yml"))
    assert {p.name for p in recipes} == {
        "rcb-fork-score.yml",
        "rcb-fork-comment.yml",
        "rcb-shards.yml",
    }
    findings = run_actionlint(recipes)
    assert [f"{f['path']}:{f['line']} {f['message']}" for f in findings] == []

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    for path in recipes:
        for job in yaml.safe_load(path.read_text())["jobs"].values():
            for step in job["steps"]:
                if str(step.get("uses", "")).startswith("rcb/evaluate@"):
                    assert set(step.get("with") or {}) <= set(action["inputs"]), path.name

    score, post = load(RECIPES / "rcb-fork-score.yml"), load(RECIPES / "rcb-fork-comment.yml")
    assert score.triggers == {"pull_request"} and post.triggers == {"workflow_run"}
    assert secrets_in_pull_request_jobs(score) == [] and untrusted_checkouts(post) == []
    assert score.jobs["score"]["permissions"] == {"contents": "read"}
    assert post.data[True]["workflow_run"]["workflows"] == [score.data["name"]]  # YAML 1.1: on
    steps = post.jobs["comment"]["steps"]
    # Trusted: nothing of the pull request's is checked out, installed or run.
    assert not [s for s in steps if "checkout" in str(s.get("uses", ""))]
    action_step = next(s for s in steps if str(s.get("uses", "")).startswith("rcb/evaluate@"))
    assert action_step["with"]["mode"] == "merge"
    assert action_step["with"]["head-sha"] == "${{ github.event.workflow_run.head_sha }}"
