"""action.yml's steps, run locally in a fake GitHub environment.

Each test runs the composite steps the way the runner does (see
test_action_runner.py) with ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``,
``GITHUB_EVENT_PATH`` and ``GITHUB_API_URL`` pointing at a fake API server that
records every call. The scoring itself is done once per module (a warm results
folder each test copies), so each Action run resumes it and stays quick.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS, ROOT, fenced, write_replay
from fake_github import FakeGitHub
from fake_openai import FakeOpenAI
from test_action_runner import ActionRun, run_action

from rcb_action.cli import main
from rcb_action.github._compare import format_delta

REPO = "octo/paper-models"
PR = 7
MODEL = "acme/toy-coder"
TOKEN = "ghs_test_token"


@dataclass
class Warm:
    replay: Path
    registry: Path
    results: Path
    report: dict


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Warm:
    """One scored run of a submitted model and ``reference`` on the toy task."""
    root = tmp_path_factory.mktemp("warm")
    replay = write_replay(
        root / "completions.jsonl",
        [
            {"task": "toy", "snippet": "scale", "model": MODEL, "completion": fenced("y = a * x")},
            {"task": "toy", "snippet": "norm", "model": MODEL, "completion": fenced("return 5.0")},
        ],
    )
    registry = root / "model.yaml"
    registry.write_text(
        f"models:\n  {MODEL}:\n    display_name: Toy Coder\n    provider: acme\n"
        "    knowledge_cutoff: 2024-01-01\n"
    )
    results = root / "results"
    report = root / "report.json"
    common = ["--registry", str(registry)]
    code = main(
        ["evaluate", "--model", f"replay:{replay}", "--model", "reference", "--tasks-dir",
         str(FIXTURE_TASKS), "--tasks", "toy", "--out", str(results), "--no-progress",
         "--workers", "2", *common]
    )  # fmt: skip
    assert code == 0
    assert main(["report", str(results), "--json", str(report), "--quiet", *common]) == 0
    return Warm(replay, registry, results, json.loads(report.read_text()))


def inputs_for(warm: Warm, workdir: Path, **extra: str) -> dict[str, str]:
    results = workdir / "rcb-results"
    if not results.exists():
        shutil.copytree(warm.results, results)
    return {
        "models": f"replay:{warm.replay}\nreference",
        "tasks": "toy",
        "tasks-dir": str(FIXTURE_TASKS),
        "registry": str(warm.registry),
        "results-dir": str(results),
        "workers": "2",
        "concurrency": "4",
        "max-cost": "5",
        "sandbox": "local",  # the default is docker; these tests check the Action's own steps
        **extra,
    }


def github_env(workdir: Path, fake: FakeGitHub, *, pull: int | None = PR) -> dict[str, str]:
    """The variables the runner sets, for a pull_request event (or a push when ``pull`` is None)."""
    event = (
        {"pull_request": {"number": pull, "base": {"ref": "main"}}}
        if pull
        else {"ref": "refs/heads/main"}
    )
    event_path = workdir / "event.json"
    event_path.write_text(json.dumps(event))
    summary = workdir / "summary.md"
    summary.write_text("")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GITHUB_") and not k.endswith("_API_KEY")
    }
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        GITHUB_EVENT_NAME="pull_request" if pull else "push",
        GITHUB_EVENT_PATH=str(event_path),
        GITHUB_REPOSITORY=REPO,
        GITHUB_API_URL=fake.url,
        GITHUB_SERVER_URL="https://github.example",
        GITHUB_STEP_SUMMARY=str(summary),
        GITHUB_WORKSPACE=str(workdir),
        GITHUB_RUN_ID="4242",
        GITHUB_WORKFLOW="models",
        GITHUB_JOB="score",
        LITELLM_LOCAL_MODEL_COST_MAP="true",
    )
    if pull:
        env["GITHUB_BASE_REF"] = "main"
    return env


def act(workdir: Path, inputs: dict[str, str], env: dict[str, str]) -> ActionRun:
    env = {**env, "RCB_CACHE_DIR": str(workdir / "rcb-cache")}
    return run_action(ROOT, inputs, env, workdir, token=TOKEN)


def base_report(warm: Warm, lower_by: float) -> dict:
    """The base branch's report: the same, with the submitted model ``lower_by`` points lower."""
    base = json.loads(json.dumps(warm.report))
    entry = base["models"][MODEL]
    entry["scaled_pass_at_1"] = round(entry["scaled_pass_at_1"] - lower_by, 2)
    entry["tasks"]["toy"]["scaled_pass_at_1"] = entry["scaled_pass_at_1"]
    return base


def canonical(pin: str) -> str:
    """``Name==1.0`` with the name normalized as pip compares names."""
    name, _, rest = pin.partition("==")
    return f"{re.sub(r'[-_.]+', '-', name).lower()}=={rest}"


def comment_row(body: str, model: str) -> str:
    return next(line for line in body.splitlines() if line.startswith(f"| {model} |"))


def test_first_run_comments_and_the_second_edits_the_same_comment(tmp_path, warm):
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, PR)
        gh.add_artifact(REPO, "rcb-report", {"report.json": json.dumps(base_report(warm, 12.5))})
        # Newer, but made by a fork's run on a branch also called main: must be ignored.
        gh.add_artifact(
            REPO, "rcb-report", {"report.json": json.dumps(base_report(warm, 40.0))}, from_fork=True
        )
        inputs = inputs_for(warm, tmp_path)

        first = act(tmp_path, inputs, github_env(tmp_path, gh))
        assert first.exit_code == 0, first.log
        report = json.loads(Path(first.outputs["report-path"]).read_text())
        assert set(report["models"]) == {MODEL, "reference"}
        score = report["models"][MODEL]["scaled_pass_at_1"]
        assert float(first.outputs["scaled-pass-rate"]) == pytest.approx(score)
        assert (Path(first.outputs["results-path"]) / "results.jsonl").is_file()

        comments = gh.comments_on(REPO, PR)
        assert len(comments) == 1
        body = comments[0]["body"]
        assert body.startswith("<!-- rcb-comment: ")
        assert comment_row(body, MODEL).endswith(f"| {format_delta(12.5)} |")
        assert comment_row(body, "reference").endswith(f"| {format_delta(0.0)} |")
        summary = (tmp_path / "summary.md").read_text()
        assert f"**{score:.1f}**" in comment_row(summary, MODEL)
        assert "Compared with the base branch" in summary

        second = act(tmp_path, inputs, github_env(tmp_path, gh))
        assert second.exit_code == 0, second.log
        after = gh.comments_on(REPO, PR)
        assert [c["id"] for c in after] == [comments[0]["id"]]
        writes = [c.method for c in gh.calls if "comments" in c.path and c.method != "GET"]
        assert writes == ["POST", "PATCH"]
        assert second.outputs == first.outputs


def test_a_missed_threshold_exits_1_after_the_summary_and_comment(tmp_path, warm):
    score = warm.report["models"][MODEL]["scaled_pass_at_1"]
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, PR)
        env = github_env(tmp_path, gh)
        run = act(tmp_path, inputs_for(warm, tmp_path, **{"fail-under": str(score + 1)}), env)
        assert run.exit_code == 1
        assert run.step("Job summary").returncode == 0
        assert run.step("Pull-request comment").returncode == 0
        assert run.step("Verdict").returncode == 1
        assert len(gh.comments_on(REPO, PR)) == 1
        assert "No results from the base branch" in gh.comments_on(REPO, PR)[0]["body"]
        assert MODEL in (tmp_path / "summary.md").read_text()
        assert float(run.outputs["scaled-pass-rate"]) == pytest.approx(score)


def test_a_push_gets_a_summary_and_no_comment(tmp_path, warm):
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        run = act(tmp_path, inputs_for(warm, tmp_path), github_env(tmp_path, gh, pull=None))
        assert run.exit_code == 0, run.log
        assert "not a pull request" in run.step("Pull-request comment").stderr
        assert not [c for c in gh.calls if "comments" in c.path or "artifacts" in c.path]
        assert "reference" in (tmp_path / "summary.md").read_text()
        # The papers' cache: keyed by the pinned versions, saved only once complete (the
        # fixture's paper is vendored, so complete at once); a cache step is a miss here.
        papers = run.step("Where the papers are cached").outputs
        assert papers["key"].startswith("rcb-papers-") and papers["dir"].endswith("/papers")
        assert run.step("Are all the papers cached now").outputs == {"complete": "true"}


@pytest.mark.slow
def test_rcb_runs_from_its_own_venv_and_leaves_the_jobs_python_alone(tmp_path, warm):
    """With setup-python's interpreter (``update-environment: false``; here a bare venv
    that has nothing installed), the Action builds a venv under RUNNER_TEMP from the
    hash-pinned lock, every later step runs that venv's rcb, and the interpreter
    itself gets nothing."""
    bare = tmp_path / "setup-python"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = bare / "bin" / "python"
    before = sorted(p.name for p in (bare / "lib").glob("python*/site-packages/*"))
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        env = {**github_env(tmp_path, gh, pull=None), "RUNNER_TEMP": str(runner_temp)}
        env.pop("PYTHONPATH", None)  # setup-python's interpreter sees no checkout of rcb
        env = {**env, "RCB_CACHE_DIR": str(tmp_path / "rcb-cache")}
        run = run_action(
            ROOT, inputs_for(warm, tmp_path), env, tmp_path, token=TOKEN,
            uses_outputs={"python": {"python-path": str(python)}},
        )  # fmt: skip
    assert run.exit_code == 0, run.log
    venv = runner_temp / "rcb-venv"
    assert run.step("Install rcb").outputs["rcb"] == str(venv / "bin" / "rcb")
    key = run.step("Where rcb is installed").outputs["key"]
    assert key.startswith("rcb-pip-") and key.split("-")[3] == platform.python_version()
    assert "reference" in (tmp_path / "summary.md").read_text()
    frozen = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "freeze", "--exclude-editable"],
        capture_output=True, text=True, check=True, env=env,
    ).stdout  # fmt: skip
    lock = (ROOT / "requirements" / "action.txt").read_text()
    pins = {canonical(line.split()[0]) for line in lock.splitlines() if "==" in line}
    installed = {canonical(line) for line in frozen.split() if "==" in line}
    # Exactly the lock (its build tools need not stay), and rcb itself from this checkout.
    assert installed <= pins
    assert [line for line in frozen.splitlines() if "==" not in line] == [
        f"rcb @ {ROOT.resolve().as_uri()}"
    ]
    assert pins - installed <= {p for p in pins if p.startswith(("setuptools==", "wheel=="))}
    assert sorted(p.name for p in (bare / "lib").glob("python*/site-packages/*")) == before


@pytest.mark.slow
def test_a_rerun_of_unchanged_work_restores_the_results_and_calls_no_model(tmp_path, warm):
    """The results folder is cached per evaluation: a second run on a fresh runner
    restores it and makes no model call; a changed task is another evaluation."""
    cache = tmp_path / "actions-cache"
    cache.mkdir()
    tasks = tmp_path / "tasks"
    for name in ("toy", "_envs"):
        shutil.copytree(FIXTURE_TASKS / name, tasks / name)

    def one_run(name: str, fake: FakeOpenAI, gh: FakeGitHub) -> ActionRun:
        workdir = tmp_path / name
        workdir.mkdir()
        env = {**github_env(workdir, gh, pull=None), "RCB_CACHE_DIR": str(tmp_path / "rcb-cache")}
        env |= {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": fake.url, "GITHUB_RUN_ID": name}
        inputs = inputs_for(warm, workdir, models="openai/gpt-4o-mini")
        inputs |= {"results-dir": "results", "tasks-dir": str(tasks)}
        return run_action(ROOT, inputs, env, workdir, token=TOKEN, cache=cache)

    with FakeOpenAI(lambda text: fenced("y = a * x")) as fake, FakeGitHub() as gh:
        gh.add_repo(REPO)
        first = one_run("first", fake, gh)
        assert first.exit_code == 0, first.log
        calls = fake.chat_calls
        assert calls == 5  # the toy task's five snippets, one sample each
        assert first.step("Evaluate").outputs["new-records"] == "5"
        assert first.step("Save the results").ran
        prefix = first.step("Where the results are cached").outputs["prefix"]
        assert [e.name for e in cache.iterdir() if e.name.startswith(prefix)] == [
            prefix + "first-1"
        ]

        second = one_run("second", fake, gh)
        assert second.exit_code == 0, second.log
        assert fake.chat_calls == calls, "the second run called the model again"
        assert second.step("Restore the results").outputs["cache-matched-key"] == prefix + "first-1"
        assert "nothing to do" in second.step("Evaluate").stderr
        assert second.step("Evaluate").outputs["new-records"] == "0"
        assert not second.step("Save the results").ran
        assert second.outputs["scaled-pass-rate"] == first.outputs["scaled-pass-rate"]

        # An edited task is another benchmark: another prefix, nothing restored, scored again.
        yaml_path = tasks / "toy" / "task.yaml"
        yaml_path.write_text(yaml_path.read_text() + "\n# edited\n")
        third = one_run("third", fake, gh)
        assert third.exit_code == 0, third.log
        assert third.step("Where the results are cached").outputs["prefix"] != prefix
        assert third.step("Restore the results").outputs == {}
        assert fake.chat_calls == calls + 5


@pytest.mark.slow
def test_a_later_job_loads_the_environment_images_instead_of_building_them(tmp_path, warm):
    """With the Docker sandbox, the first job saves the environment images it built into
    the cache; a job on a runner without them (the image removed here) loads them from
    the cache: the very same image, not a rebuild."""
    docker = pytest.importorskip("docker")
    try:
        client = docker.from_env()
        client.ping()
    except Exception as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no Docker daemon: {exc}")
    cache = tmp_path / "actions-cache"
    cache.mkdir()
    # The toy task on an environment of its own name: its image is this test's alone to
    # remove, while the other test process runs the toy task on the shared one.
    env_name = f"numpy-cache-p{os.getpid()}"
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASKS / "toy", tasks / "toy")
    shutil.copytree(FIXTURE_TASKS / "_envs" / "numpy", tasks / "_envs" / env_name)
    task_yaml = tasks / "toy" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text().replace("env: numpy\n", f"env: {env_name}\n"))

    def one_job(name: str) -> ActionRun:
        workdir = tmp_path / name
        workdir.mkdir()
        env = {**github_env(workdir, gh, pull=None), "RUNNER_TEMP": str(workdir / "temp")}
        env |= {"RCB_CACHE_DIR": str(tmp_path / "rcb-cache"), "GITHUB_RUN_ID": name}
        inputs = inputs_for(warm, workdir, models="reference", sandbox="docker")
        inputs |= {"results-dir": "results", "tasks-dir": str(tasks)}
        return run_action(ROOT, inputs, env, workdir, token=TOKEN, cache=cache)

    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        first = one_job("first")
        assert first.exit_code == 0, first.log
        images = first.step("Which images the tasks need").outputs
        [tag] = images["tags"].split()
        assert tag.startswith(f"rcb-env:{env_name}-")
        assert images["key"].startswith("rcb-images-")
        try:
            assert first.step("Keep the images").outputs == {"complete": "true"}
            built = client.images.get(tag).id
            client.images.remove(tag, force=True)  # the next job's runner has never seen it

            second = one_job("second")
            assert second.exit_code == 0, second.log
            assert second.step("Restore the images").outputs["cache-hit"] == "true"
            assert f"loaded {tag}" in second.step("Load the images").stderr
            assert not second.step("Keep the images").ran
            assert client.images.get(tag).id == built
            assert second.outputs["scaled-pass-rate"] == "100.00"
        finally:  # the image is this test's own: it goes, passed or not
            with contextlib.suppress(docker.errors.ImageNotFound):
                client.images.remove(tag, force=True)


def test_a_task_error_becomes_an_annotation_on_its_line(tmp_path, warm):
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASKS / "toy", tasks / "toy")
    shutil.copytree(FIXTURE_TASKS / "_envs", tasks / "_envs")
    source = tasks / "toy" / "src" / "toy.py"
    lines = source.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines, 1) if '<paper2code name="norm">' in line)
    source.write_text("".join(line for line in lines if '</paper2code name="norm">' not in line))
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, PR)
        inputs = inputs_for(warm, tmp_path, **{"tasks-dir": str(tasks)})
        run = act(tmp_path, inputs, github_env(tmp_path, gh))
        assert run.exit_code == 2
        assert f"::error file=tasks/toy/src/toy.py,line={start},title=rcb::" in run.stdout
        assert [s.name for s in run.steps if s.ran][-1] == "Evaluate"
        assert not [c for c in gh.calls if "comments" in c.path]


def test_a_bad_input_is_one_line_naming_it(tmp_path, warm):
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        run = act(tmp_path, inputs_for(warm, tmp_path, samples="many"), github_env(tmp_path, gh))
        assert run.exit_code == 2
        assert "::error title=rcb::input 'samples': 'many' is not a whole number" in run.stdout
        run = act(
            tmp_path, inputs_for(warm, tmp_path, **{"max-cost": "lots"}), github_env(tmp_path, gh)
        )
        assert run.exit_code == 2
        assert (
            "::error title=rcb::input 'max-cost': 'lots' is not a number of dollars" in run.stdout
        )
