"""evaluate.yml's own steps, run locally: plan the matrix, score every leg through the
Action, hand the shards over as the artifacts would, merge. The merge equals one
unsharded ``rcb evaluate`` of the same models on the same tasks, and a task that
needs a GPU goes to the GPU runner's leg, or is left out with a note in the summary.
"""

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

from rcb_action.cli import main
from rcb_action.results import ResultStore

WORKFLOW = ROOT / ".github" / "workflows" / "evaluate.yml"
MODEL = "acme/toy-coder"


def job_step(job: str, name: str) -> dict[str, Any]:
    spec = yaml.safe_load(WORKFLOW.read_text())
    return next(s for s in spec["jobs"][job]["steps"] if s.get("name") == name)


def render(text: str, matrix: dict[str, Any]) -> str:
    """The expressions evaluate.yml's leg steps use: matrix values and dispatch inputs."""

    def value(match: re.Match[str]) -> str:
        expression = match.group(1)
        if expression.startswith("matrix."):
            return str(matrix[expression.removeprefix("matrix.")])
        if expression.startswith("github.event.inputs."):
            return ""  # a push: no dispatch inputs
        raise AssertionError(f"unexpected expression in evaluate.yml: {expression}")

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", value, text)


def run_step(step: dict[str, Any], env: dict[str, str], cwd: Path) -> dict[str, str]:
    """A ``run:`` step with its env: values given by the test; returns its outputs."""
    assert "${{" not in step["run"]
    assert set(env) <= set(step.get("env") or {}) | {"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"}
    output = cwd / "step-output"
    output.write_text("")
    script = cwd / "step.sh"
    script.write_text(step["run"])
    base = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    base["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{base.get('PATH', '')}"
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        env={**base, "GITHUB_OUTPUT": str(output), **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return parse_output_file(output)


def plan(cwd: Path, replay: Path, gpu_runner: str) -> dict[str, str]:
    step = job_step("plan", "Models x shards, GPU legs, submissions")
    env = {"MODELS": f"replay:{replay}", "SHARDS": "3", "TASKS": "", "GPU_RUNNER": gpu_runner}
    return run_step(step, env, cwd)


def comparable(out: Path) -> list[tuple[Any, ...]]:
    return sorted(
        (r.task, r.snippet, r.model, r.sample, r.status, r.failure_class, r.prompt_sha, r.task_sha)
        for r in ResultStore(out).records()
    )


def test_the_workflows_legs_and_merge_give_the_unsharded_results(tmp_path):
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASKS / "toy", tasks / "toy")
    shutil.copytree(FIXTURE_TASKS / "_envs", tasks / "_envs")
    shutil.copytree(FIXTURE_TASKS / "toy", tasks / "toy-gpu")
    gpu_yaml = tasks / "toy-gpu" / "task.yaml"
    gpu_yaml.write_text(gpu_yaml.read_text().replace("id: toy", "id: toy-gpu") + "gpu: required\n")
    replay = write_replay(
        tmp_path / "completions.jsonl",
        [
            {"task": "toy", "snippet": "scale", "model": MODEL, "completion": fenced("y = a * x")},
            {"task": "toy", "snippet": "norm", "model": MODEL, "completion": fenced("return 5.0")},
        ],
    )

    # Without a GPU runner the GPU task is left out, with a note for the summary.
    no_gpu = plan(tmp_path, replay, "")
    assert "toy-gpu" in no_gpu["notes"] and "RCB_GPU_RUNNER" in no_gpu["notes"]
    assert not [leg for leg in json.loads(no_gpu["matrix"])["include"] if leg["gpu"]]

    planned = plan(tmp_path, replay, "self-hosted, gpu")
    legs = json.loads(planned["matrix"])["include"]
    assert planned["legs"] == str(len(legs)) == "4" and planned["notes"] == ""
    gpu_legs = [leg for leg in legs if leg["gpu"]]
    assert [(leg["tasks"], leg["runner"]) for leg in gpu_legs] == [
        ("toy-gpu", ["self-hosted", "gpu"])
    ]
    assert sorted(leg["shard"] for leg in legs if not leg["gpu"]) == ["1/3", "2/3", "3/3"]
    assert {leg["tasks"] for leg in legs if not leg["gpu"]} == {"toy"}
    assert len({leg["leg"] for leg in legs}) == len(legs)

    score = job_step("evaluate", "Score one shard (rcb evaluate --shard I/N, through the Action)")
    upload = job_step("evaluate", "Keep the shard's results")
    download = job_step("merge", "Download every shard's results")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["GITHUB_STEP_SUMMARY"] = str(tmp_path / "leg-summary.md")
    for leg in legs:
        inputs = {k: render(str(v), leg) for k, v in score["with"].items()}
        assert inputs["sandbox"] == "docker" and inputs["comment"] == "false"
        # The only differences from the runner: the local sandbox (the Docker backend is
        # tested on its own) and the tasks folder of this test.
        inputs.update(sandbox="local", **{"tasks-dir": str(tasks)})
        run = run_action(ROOT, inputs, env, tmp_path)
        assert run.exit_code == 0, run.log
        # upload-artifact then download-artifact (pattern): shards/<artifact name>/
        name = render(upload["with"]["name"], leg)
        assert re.fullmatch(download["with"]["pattern"].replace("*", ".*"), name)
        shutil.copytree(tmp_path / render(upload["with"]["path"], leg), tmp_path / "shards" / name)

    run_step(job_step("merge", "Merge the shards and report"), {}, tmp_path)
    summary = tmp_path / "summary.md"
    run_step(
        job_step("merge", "Job summary"),
        {"NOTES": no_gpu["notes"], "GITHUB_STEP_SUMMARY": str(summary)},
        tmp_path,
    )
    assert "toy-gpu" in summary.read_text() and MODEL in summary.read_text()

    whole = tmp_path / "whole"
    args = ["--model", f"replay:{replay}", "--tasks-dir", str(tasks), "--no-progress"]
    assert main(["evaluate", *args, "--out", str(whole)]) == 0
    merged = tmp_path / "merged"
    assert comparable(merged) == comparable(whole)
    assert {r.task for r in ResultStore(merged).records()} == {"toy", "toy-gpu"}
    assert main(["report", str(whole), "--json", str(tmp_path / "whole.json"), "--quiet"]) == 0
    merged_report = json.loads((merged / "report.json").read_text())
    whole_report = json.loads((tmp_path / "whole.json").read_text())
    assert merged_report["models"] == whole_report["models"]
