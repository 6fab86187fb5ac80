"""validate.yml's submission path, run locally: a pull request adds a model submission;
the workflow finds it, checks it, scores it with replay: (no key, no token) through the
Action and writes the verdict the trusted commenter posts. The evaluation on merge then
plans a leg for it, so it joins the leaderboard."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from conftest import FIXTURE_TASKS, ROOT, fenced, write_replay
from test_action_runner import parse_output_file, run_action

from rcb_action.github import read_verdict, render_verdict

WORKFLOW = ROOT / ".github" / "workflows" / "validate.yml"
MODEL = "acme/coder-7b"


def step(name: str) -> dict[str, Any]:
    spec = yaml.safe_load(WORKFLOW.read_text())
    return next(s for s in spec["jobs"]["validate"]["steps"] if s.get("name") == name)


def github_shell(workflow: dict[str, Any], job: str, spec: dict[str, Any]) -> list[str]:
    """The shell GitHub runs a step's script with: ``shell: bash`` (the step's, else the
    job's or the workflow's ``defaults``) adds pipefail; no shell at all does not."""
    shell = (
        spec.get("shell")
        or workflow["jobs"][job].get("defaults", {}).get("run", {}).get("shell")
        or workflow.get("defaults", {}).get("run", {}).get("shell")
    )
    if shell is None:
        return ["bash", "-e", "-c"]
    assert shell == "bash", shell
    return ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]


def run_step(name: str, env: dict[str, str], cwd: Path) -> tuple[int, dict[str, str], str]:
    spec = step(name)
    assert "${{" not in spec["run"]
    assert set(env) <= set(spec.get("env") or {})
    output = cwd / "step-output"
    output.write_text("")
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    base["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{base.get('PATH', '')}"
    proc = subprocess.run(
        [*github_shell(yaml.safe_load(WORKFLOW.read_text()), "validate", spec), spec["run"]],
        env={**base, **env, "GITHUB_OUTPUT": str(output), "GITHUB_WORKSPACE": str(cwd)},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return proc.returncode, parse_output_file(output), proc.stdout + proc.stderr


def render_changed(text: str, changed: dict[str, str]) -> str:
    """``${{ steps.changed.outputs.X }}``, the only expression the scoring step takes."""

    def value(match: re.Match[str]) -> str:
        expression = match.group(1)
        assert expression.startswith("steps.changed.outputs."), expression
        return changed[expression.removeprefix("steps.changed.outputs.")]

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", value, text)


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout.strip()


def test_a_failing_check_piped_into_tee_fails_its_step(tmp_path):
    """The check steps pipe into ``tee``: GitHub's shell must keep the failure."""
    folder = tmp_path / "submissions" / "broken"
    folder.mkdir(parents=True)
    (folder / "model.yaml").write_text("models: {}\n")  # no entry: the check fails
    code, checked, log = run_step(
        "Check the changed submissions", {"SUBMISSIONS": "submissions/broken"}, tmp_path
    )
    assert code == 0, log  # the step records the status; the verdict step decides
    assert checked["status"] not in ("", "0"), log
    assert "submissions/broken" in (tmp_path / "submissions.log").read_text()


def test_a_submission_pull_request_is_checked_scored_and_planned(tmp_path):
    shutil.copytree(FIXTURE_TASKS / "toy", tmp_path / "tasks" / "toy")
    shutil.copytree(FIXTURE_TASKS / "_envs", tmp_path / "tasks" / "_envs")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    base = git(tmp_path, "rev-parse", "HEAD")

    folder = tmp_path / "submissions" / "acme-coder-7b"
    folder.mkdir(parents=True)
    (folder / "model.yaml").write_text(
        f"models:\n  {MODEL}:\n    display_name: Acme Coder 7B\n    provider: acme\n"
        "    knowledge_cutoff: 2025-01-31\n"
    )
    write_replay(
        folder / "completions.jsonl",
        [{"task": "toy", "snippet": "scale", "model": MODEL, "completion": fenced("y = a * x")}],
    )
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "submit acme/coder-7b")
    head = git(tmp_path, "rev-parse", "HEAD")

    code, changed, log = run_step("What changed", {"BASE_SHA": base}, tmp_path)
    assert code == 0, log
    assert changed["tasks"] == "" and changed["submissions"] == "submissions/acme-coder-7b"

    code, checked, log = run_step(
        "Check the changed submissions", {"SUBMISSIONS": changed["submissions"]}, tmp_path
    )
    assert code == 0 and checked["status"] == "0", log

    score = step("Score the changed submissions (replay, no key needed)")
    assert score["if"] == "steps.submissions.outputs.status == '0'"
    inputs = {k: render_changed(str(v), changed) for k, v in score["with"].items()}
    assert inputs["github-token"] == "" and inputs["comment"] == "false"
    inputs.update(sandbox="local", **{"tasks-dir": str(tmp_path / "tasks")})
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(GITHUB_EVENT_NAME="pull_request", GITHUB_WORKSPACE=str(tmp_path))
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "summary.md")
    run = run_action(ROOT, inputs, env, tmp_path)
    assert run.exit_code == 0, run.log
    report = json.loads(Path(run.outputs["report-path"]).read_text())
    assert report["models"][MODEL]["display_name"] == "Acme Coder 7B"

    code, _, log = run_step(
        "Verdict",
        {
            "PR_NUMBER": "12",
            "HEAD_SHA": head,
            "CHANGED_OUTCOME": "success",
            "TASKS": "",
            "TASKS_STATUS": "",
            "SUBMISSIONS": changed["submissions"],
            "SUBMISSIONS_STATUS": "0",
            "SCORE_OUTCOME": "success",
            "SCORE_REPORT": run.outputs["report-path"],
        },
        tmp_path,
    )
    assert code == 0, log
    verdict = read_verdict(tmp_path / "verdict" / "verdict.json")
    assert (verdict.pull, verdict.head_sha, verdict.status) == (12, head, "passed")
    assert [s.model for s in verdict.scores] == [MODEL]
    assert not (tmp_path / "verdict" / "comment.md").exists()  # data only, no Markdown
    comment = render_verdict(verdict)
    assert "ready for review" in comment and f"| {MODEL} |" in comment
    code, _, log = run_step(
        "Fail unless everything was validated and passed", {"VERDICT": "passed"}, tmp_path
    )
    assert code == 0, log

    # After the merge, the evaluation plans a leg for every submission.
    output = tmp_path / "plan-output"
    subprocess.run(
        [sys.executable, "-m", "rcb_action", "gh", "plan", "--models=reference",
         "--submissions=submissions", "--tasks-dir", str(tmp_path / "tasks")],
        cwd=tmp_path, check=True, env={**env, "GITHUB_OUTPUT": str(output)},
    )  # fmt: skip
    legs = json.loads(parse_output_file(output)["matrix"])["include"]
    submitted = [leg for leg in legs if leg["registry"]]
    assert [(leg["model"], leg["registry"]) for leg in submitted] == [
        (
            "replay:submissions/acme-coder-7b/completions.jsonl",
            "submissions/acme-coder-7b/model.yaml",
        )
    ]


def test_a_gpu_task_on_this_cpu_runner_is_not_validated_and_fails_the_job(tmp_path):
    """rcb validate skips a GPU task here (exit 0): the verdict is "not validated",
    never ready for review, and the job fails."""
    folder = tmp_path / "tasks" / "gpu-task"
    folder.mkdir(parents=True)
    (folder / "task.yaml").write_text("id: gpu-task\ngpu: required\n")
    (tmp_path / "validate.log").write_text(
        "ok    gpu-task: 2 snippets, reference 0.0 s, skipped: skipped: the task requires "
        "a GPU and this host has none\nrcb: 1 of 1 task(s) valid\n"
    )
    env = {
        "PR_NUMBER": "3",
        "HEAD_SHA": "d" * 40,
        "CHANGED_OUTCOME": "success",
        "TASKS": "tasks/gpu-task",
        "TASKS_STATUS": "0",
        "SUBMISSIONS": "",
        "SUBMISSIONS_STATUS": "",
        "SCORE_OUTCOME": "skipped",
        "SCORE_REPORT": "",
    }
    code, outputs, log = run_step("Verdict", env, tmp_path)
    assert code == 0, log
    assert outputs["status"] == "not-validated"
    verdict = read_verdict(tmp_path / "verdict" / "verdict.json")
    task = verdict.tasks.items["tasks/gpu-task"]
    assert task.status == "not validated" and "requires a GPU" in task.problems[0]
    comment = render_verdict(verdict)
    assert "ready for review" not in comment and "✅" not in comment
    assert "not validated" in comment and "requires a GPU" in comment
    code, _, log = run_step(
        "Fail unless everything was validated and passed", {"VERDICT": "not-validated"}, tmp_path
    )
    assert code == 1 and "not-validated" in log
