"""The reproduction track end to end, with scripted agents replayed through litellm's real
code path (a custom provider, tests/scripted_provider.py, answers with their tool calls) in
real sandboxes: one agent reproduces the fixture task
fully, one fails at each stage, three succeed suspiciously; a gold run that fails makes
the task invalid. The wheelhouse is a folder with one tiny wheel made here, so no
package index is needed."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_provider import ScriptedProvider, scripted_provider

from rcb_action.agent import AgentModel, LiteLLMAgent, ScriptedSession, turn_from_dict, turn_to_dict
from rcb_action.models import LiteLLMModel
from rcb_action.reproduce import (
    GOLD_FILE,
    REPRODUCTION_FILE,
    STAGES,
    ReproduceConfig,
    ReproductionRecord,
    read_reproduction_records,
    reference_files,
    reference_turns,
    reproduce,
)
from rcb_action.sandbox import get_backend
from rcb_action.sandbox._local import LocalBackend
from rcb_action.tasks import load_task

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures" / "repro_tasks"
TOYFIT = (
    "def fraction_inside(points):\n"
    "    points = list(points)\n"
    "    return sum(1 for x, y in points if x * x + y * y <= 1.0) / len(points)\n"
)
# A venv without pip and the pure-Python wheel unpacked into it: seconds faster than pip,
# and the env check sees the same thing (the distribution installed in .venv).
FAST_ENV = (
    "python3 -m venv --without-pip .venv && .venv/bin/python -c "
    "\"import sysconfig, zipfile; zipfile.ZipFile('/wheels/toyfit-1.0-py3-none-any.whl')"
    ".extractall(sysconfig.get_paths()['purelib'])\""
)


def make_wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    """A minimal pure-Python wheel, written by hand (no build backend needed)."""
    info = f"{name}-{version}.dist-info"
    files = dict(files)
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files[f"{info}/WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: rcb-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    rows = []
    for path, text in files.items():
        digest = hashlib.sha256(text.encode()).digest()
        encoded = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        rows.append(f"{path},sha256={encoded},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*rows, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """pip sees only a folder with the toyfit wheel; rcb's caches are private to this module."""
    root = tmp_path_factory.mktemp("repro-env")
    wheels = root / "wheels"
    wheels.mkdir()
    make_wheel(wheels, "toyfit", "1.0", {"toyfit/__init__.py": TOYFIT})
    saved = {k: os.environ.get(k) for k in ("PIP_NO_INDEX", "PIP_FIND_LINKS", "RCB_CACHE_DIR")}
    os.environ.update(
        {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "RCB_CACHE_DIR": str(root / "cache")}
    )
    try:
        yield root
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def confined() -> None:
    backend = get_backend("local")
    if not getattr(backend, "confined", False):
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but bubblewrap cannot confine commands here")
        pytest.skip("needs bubblewrap as root (agents' commands run only in a sandbox)")


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def turn(*calls: dict[str, Any], content: str = "") -> dict[str, Any]:
    return {"content": content, "tool_calls": list(calls)}


def scripted(
    *,
    plan: str | None = None,
    requirements: str = "toyfit==1.0\n",
    code: dict[str, str] | None = None,
    after_run: tuple[dict[str, Any], ...] = (),
) -> list[dict[str, Any]]:
    """An agent's turns for the fixture task: the gold reproduction unless told otherwise."""
    files = reference_files(load_task(FIXTURES / "repro-toy"))
    code = code if code is not None else {"darts.py": files["darts.py"]}
    return [
        turn(call("read_file", path="paper.txt"), content="Reading the paper first."),
        turn(call("write_file", path="plan.md", content=plan or files["plan.md"]), call("submit")),
        turn(
            call("write_file", path="requirements.txt", content=requirements),
            call("run", command=FAST_ENV),
            call("submit", note="venv ready"),
        ),
        turn(
            *[call("write_file", path=p, content=t) for p, t in code.items()],
            call("write_file", path="reproduce.sh", content=files["reproduce.sh"]),
            call("submit"),
        ),
        turn(
            call("run", command=". .venv/bin/activate && bash reproduce.sh && ls"),
            call("write_file", path="conclusions.md", content=CONCLUSIONS),
            *after_run,
            call("submit"),
        ),
    ]


CONCLUSIONS = "The estimate of pi is within the paper's spread over the five seeds.\n"


def darts(edit: tuple[str, str] | None = None) -> dict[str, str]:
    text = reference_files(load_task(FIXTURES / "repro-toy"))["darts.py"]
    if edit:
        assert edit[0] in text
        text = text.replace(*edit)
    return {"darts.py": text}


FABRICATED = """\
import json

estimates = [3.136, 3.146, 3.1, 3.18, 3.16]
results = {
    "metrics": {"pi_estimate": estimates},
    "curves": {"running_estimate": {"x": [100, 1000, 2000], "y": [3.2, 3.14, 3.144]}},
    "splits": {"train": ["a", "b"], "test": ["c", "d"]},
}
with open("results.json", "w") as handle:
    json.dump(results, handle)
"""

# Agents that want to pass without doing the work: each keeps the paper's method in its
# files, and each must fail with the flag that names what it did.
NEVER_CALLS = (
    "def main():\n",
    """def main():
    base = int(os.environ.get("RCB_SEED", "0"))
    noise = random.Random(base)
    estimates = [3.1416 + noise.gauss(0, 0.02) for _ in range(5)]
    results = {
        "metrics": {"pi_estimate": estimates},
        "curves": {"running_estimate": {"x": CHECKPOINTS, "y": [3.3, 3.15, sum(estimates) / 5]}},
        "splits": {"train": ["a", "b"], "test": ["c", "d"]},
    }
    with open("results.json", "w") as handle:
        json.dump(results, handle)


def unused():
""",
)
COPIED = (
    "estimates.append(4 * fraction_inside(darts))",
    "estimates = [3.1436, 3.1396, 3.1416, 3.1376, 3.1456][: len(estimates) + 1]",
)
OWN_LIE = call(
    "write_file",
    path="results.json",
    content=json.dumps({"metrics": {"pi_estimate": [3.3] * 5}}),
)
ADVERSARIES: dict[str, tuple[list[dict[str, Any]], str]] = {
    "never-calls": (
        scripted(code=darts(NEVER_CALLS)),
        "the code of 'dart throwing' never ran in the reruns (darts.py:13)",
    ),
    "ignores-seed": (
        scripted(code=darts(('int(os.environ.get("RCB_SEED", "0"))', "0"))),
        "reruns with different seeds gave identical numbers for pi_estimate",
    ),
    "one-run-five-times": (
        scripted(code=darts(("for seed in range(base, base + 5):", "for seed in [base] * 5:"))),
        "pi_estimate: every run of rerun 1 gave",
    ),
    "copies-numbers": (
        scripted(code=darts(COPIED)),
        "written in the submitted files, not computed",
    ),
    "own-numbers-lie": (
        scripted(after_run=(OWN_LIE,)),
        "pi_estimate: the attempt's own results.json says 3.3, the reruns give",
    ),
}

# Each agent's script; the judge's answers go in the same order (one per judged attempt).
AGENTS: dict[str, list[dict[str, Any]]] = {
    "full": scripted(),
    "fails-plan": [
        turn(call("run", command="ls")),
        turn(call("write_file", path="plan.md", content="Plan: throw darts."), call("submit")),
    ],
    "fails-env": scripted(requirements="toyfit==1.0\nnotapkg==9.9\n"),
    "fails-code": scripted(code=darts(("import random\n", "import random\n\nimport scipy\n"))),
    "fails-train": scripted(code=darts(("def main():\n", "def main():\n    1 / 0\n"))),
    "fails-result": scripted(code=darts(("4 * fraction_inside(darts))", "2 * fraction_inside(darts))"))),
    "review-split": scripted(code=darts(('"test": [identity(p) for p in darts[1000:]]', '"test": [identity(p) for p in darts[:1000]]'))),
    "review-module": scripted(code={"darts.py": FABRICATED}),
    "review-curve": scripted(code=darts(("sum(v) / len(v) for v", "sum(v) / len(v) / 2 for v"))),
    **{name: turns for name, (turns, _) in ADVERSARIES.items()},
}  # fmt: skip
GOOD = {"M1": 1.0, "M2": 1.0, "D1": 0.9}
POOR = {"M1": 0.2, "M2": 0.5, "D1": 0.9}


def judgement(grades: dict[str, float], plan: float = 0.8, conclusions: float = 0.9) -> str:
    items = [
        {"id": i, "plan": plan, "implementation": g, "reason": "ok"} for i, g in grades.items()
    ]
    # Asked for only when the harness's reruns gave results; ignored otherwise.
    items.append({"id": "conclusions", "implementation": conclusions, "reason": "supported"})
    return "```json\n" + json.dumps({"items": items}) + "\n```"


@pytest.fixture(scope="module")
def provider() -> Iterator[ScriptedProvider]:
    with scripted_provider() as registered:
        yield registered


@pytest.fixture(scope="module")
def run(
    environment: Path, confined: None, provider: ScriptedProvider
) -> tuple[Path, dict[str, ReproductionRecord]]:
    out = environment / "out"
    agents = [
        LiteLLMAgent(provider.script(name, turns), backoff_s=0.01) for name, turns in AGENTS.items()
    ]
    judged = [name for name in AGENTS if name != "fails-plan"]
    answers = [judgement(GOOD if name == "full" else POOR) for name in judged]
    answers[judged.index("fails-env")] = "I think it is fine."  # unreadable: asked again
    answers.insert(judged.index("fails-env") + 1, judgement(POOR, plan=0.4))
    judge = LiteLLMModel("openai/judge", mock_responses=answers, backoff_s=0.01)
    config = ReproduceConfig(models=[], out=out, tasks_dir=FIXTURES, progress=False)
    summary = reproduce(config, agents=agents, judge=judge)
    assert summary.done == len(AGENTS) and not summary.invalid_tasks
    records = {
        r.model.removeprefix("scripted/"): r
        for r in read_reproduction_records(out / REPRODUCTION_FILE)
    }
    return out, records


def test_full_reproduction(run):
    out, records = run
    record = records["full"]
    assert record.status == "scored" and record.failed_stage is None
    assert [s.status for s in record.stages.values()] == ["passed"] * 5
    assert record.dimensions == dict.fromkeys(
        [
            "env_setup",
            "code_runnability",
            "method_accuracy",
            "experiment_design",
            "result_consistency",
        ],
        True,
    )
    assert not record.needs_review
    metric = record.metrics["pi_estimate"]
    # Two reruns by the harness, five runs each, with seeds it drew itself.
    assert metric.in_range and len(metric.reproduced) == 10 and metric.relative_error is not None
    seeds = [r["seed"] for r in record.reruns]
    assert len(seeds) == 2 and len(set(seeds)) == 2 and not {0, 1, 2, 3, 4} & set(seeds)
    assert not record.review_reasons
    assert all(c.passed for c in record.curves)
    assert record.scores["plan"] == pytest.approx(0.8)
    assert record.usage["turns"] == 5 and record.usage["tokens_in"] > 0
    # Everything needed to audit and re-grade is kept.
    logs = out / record.log_dir
    for stage in STAGES:
        assert (out / record.stages[stage].log).is_file()
    assert (logs / "workspace" / "darts.py").is_file() and (logs / "results.json").is_file()
    assert record.judge is not None and record.judge.items
    prompt = (out / record.judge.prompt_log).read_text()
    assert "Grade what is written" in prompt
    # The judge sees the reruns' results and the agent's conclusions, and grades them.
    assert "## The harness's reruns: results" in prompt and "pi_estimate: reproduced" in prompt
    assert CONCLUSIONS.strip() in prompt
    assert record.scores["conclusions"] == pytest.approx(0.9)
    assert "```json" in (out / record.judge.answer_log).read_text()
    steps = [json.loads(line) for line in (logs / "steps.jsonl").read_text().splitlines()]
    assert all("time" in s and "elapsed_s" in s for s in steps)
    tools = [s for s in steps if s["event"] == "tool"]
    assert {"read_file", "write_file", "run", "submit"} <= {t["name"] for t in tools}
    ran = next(t for t in tools if t["name"] == "run" and "reproduce.sh" in t["arguments"])
    assert ran["returncode"] == 0 and "results.json" in ran["stdout"]


@pytest.mark.parametrize("stage", ["plan", "env_setup", "code_impl", "train_debug", "result_check"])
def test_a_failed_stage_stops_the_rest_and_is_the_cause(run, stage):
    name = {
        "plan": "fails-plan",
        "env_setup": "fails-env",
        "code_impl": "fails-code",
        "train_debug": "fails-train",
        "result_check": "fails-result",
    }[stage]
    record = run[1][name]
    assert record.status == "scored"
    assert record.failed_stage == stage
    index = STAGES.index(stage)
    for before in STAGES[:index]:
        assert record.stages[before].status == "passed"
    assert record.stages[stage].status == "failed" and record.stages[stage].error
    for after in STAGES[index + 1 :]:
        assert record.stages[after].status == "not_run"
        assert record.stages[after].error == f"not run: {stage} failed"
    expected = {
        "env_setup": index > 1,
        "code_runnability": index > 3,
        "result_consistency": False,
    }
    for dimension, value in expected.items():
        assert record.dimensions[dimension] is value
    assert not record.needs_review


def test_stage_errors_say_what_went_wrong(run):
    records = run[1]
    assert "words of prose" in records["fails-plan"].stages["plan"].error
    assert "notapkg is not installed" in records["fails-env"].stages["env_setup"].error
    assert "no module named 'scipy'" in records["fails-code"].stages["code_impl"].error
    assert "ZeroDivisionError" in records["fails-train"].stages["train_debug"].error
    result = records["fails-result"]
    assert not result.metrics["pi_estimate"].in_range
    assert result.metrics["pi_estimate"].direction == "worse"
    assert "outside" in result.stages["result_check"].error


def test_plan_stage_refuses_commands(run):
    out, records = run
    steps = (out / records["fails-plan"].log_dir / "steps.jsonl").read_text()
    assert "the plan stage allows read_file" in steps


def test_judge_grades_are_kept_and_decide_two_dimensions(run):
    records = run[1]
    full, poor = records["full"], records["fails-train"]
    assert full.scores["method_accuracy"] == pytest.approx(1.0)
    # Weighted: M1 weighs 2, M2 1 -> (2 x 0.2 + 0.5) / 3.
    assert poor.scores["method_accuracy"] == pytest.approx(0.3)
    assert poor.dimensions["method_accuracy"] is False
    assert poor.dimensions["experiment_design"] is True
    # No plan, no code: nothing passes, and the judge is not asked.
    assert records["fails-plan"].judge is None
    assert records["fails-plan"].dimensions["method_accuracy"] is False
    # An unreadable judgement is asked again and both answers are stored.
    env = records["fails-env"]
    assert env.judge.error is None and env.scores["plan"] == pytest.approx(0.4)
    assert (run[0] / env.judge.answer_log).read_text().count("--- answer") == 2
    prompts = (run[0] / env.judge.prompt_log).read_text()
    assert "--- prompt 2 (retry)" in prompts and "could not be read" in prompts


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("review-split", "appear in both 'train' and 'test'"),
        ("review-module", "no code for 'dart throwing' found"),
        ("review-curve", "curve running_estimate does not match"),
    ],
)
def test_suspicious_success_is_flagged_not_trusted(run, name, reason):
    record = run[1][name]
    assert record.metrics["pi_estimate"].in_range
    assert record.needs_review
    assert any(reason in r for r in record.review_reasons)
    assert record.failed_stage == "result_check"
    assert record.dimensions["result_consistency"] is False
    assert "needs review" in record.stages["result_check"].error


@pytest.mark.parametrize("name", list(ADVERSARIES))
def test_an_agent_that_skips_the_work_fails_with_its_flag(run, name):
    """The reruns, not the agent's own run, are graded: each way of passing without the
    work is named, and the attempt is no reproduction."""
    record = run[1][name]
    flag = ADVERSARIES[name][1]
    assert record.stages["train_debug"].status == "passed"
    assert any(flag in reason for reason in record.review_reasons), record.review_reasons
    assert record.failed_stage == "result_check"
    assert record.dimensions["result_consistency"] is False


def test_the_rerun_copies_only_the_submitted_text_files(run):
    """What the agent's sandbox held beyond its text files (its .venv, its results.json)
    never reaches the rerun: the rerun's venv is rcb's, from requirements.txt."""
    out, records = run
    log = (out / records["full"].stages["train_debug"].log).read_text()
    assert "fresh sandbox" in log and "pip install -q -r requirements.txt" in log
    assert log.count("RCB_SEED=") == 2
    own = out / records["own-numbers-lie"].log_dir / "own-results.json"
    assert json.loads(own.read_text())["metrics"]["pi_estimate"] == [3.3] * 5


def test_gold_run_passed_and_the_rerun_resumes(run):
    out, _ = run
    gold = read_reproduction_records(out / GOLD_FILE)
    assert gold and gold[-1].failed_stage is None
    before = (out / REPRODUCTION_FILE).read_bytes()
    config = ReproduceConfig(models=[], out=out, tasks_dir=FIXTURES, progress=False)
    agents = [LiteLLMAgent(f"scripted/{name}") for name in AGENTS]  # no turn may be asked for
    summary = reproduce(config, agents=agents)
    assert summary.done == 0 and summary.skipped == len(AGENTS)
    assert (out / REPRODUCTION_FILE).read_bytes() == before


def test_report_shows_five_dimensions_funnel_and_plan_gap(run, cli, tmp_path):
    out, _ = run
    code, stdout, _ = cli(
        "report", out, "--json", tmp_path / "r.json", "--markdown", tmp_path / "r.md"
    )
    assert code == 0
    assert "failure rate per dimension" in stdout and "Stage funnel" in stdout
    section = json.loads((tmp_path / "r.json").read_text())["reproduction"]
    full = section["models"]["scripted/full"]
    assert full["failure_rates"] == dict.fromkeys(section["dimensions"], 0.0)
    assert full["plan_score"] == pytest.approx(80.0) and full["execution_success"] == 100.0
    assert section["models"]["scripted/fails-plan"]["funnel"][0]["passed"] == 0
    flagged = {f"scripted/{name}" for name, record in run[1].items() if record.needs_review}
    assert {item["model"] for item in section["needs_review"]} == flagged
    assert {"scripted/review-split", "scripted/review-module", "scripted/review-curve"} <= flagged
    assert "## rcb reproduction track" in (tmp_path / "r.md").read_text()


def test_a_failing_gold_run_invalidates_the_task(environment, confined, tmp_path, cli):
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURES, tasks)
    script = tasks / "repro-toy" / "reference" / "darts.py"
    script.write_text(
        script.read_text().replace("def main():\n", "def main():\n    raise SystemExit(3)\n")
    )
    out = tmp_path / "out"
    replay = tmp_path / "agent.jsonl"
    replay.write_text(json.dumps({"task": "repro-toy", "turns": AGENTS["full"]}) + "\n")
    code, stdout, err = cli(
        "reproduce", "--model", f"replay:{replay}", "--tasks-dir", tasks, "--out", out
    )
    assert code == 1
    assert "INVALID" in err and "train_debug" in err
    assert read_reproduction_records(out / REPRODUCTION_FILE) == []
    gold = read_reproduction_records(out / GOLD_FILE)
    assert gold[0].failed_stage == "train_debug"
    code, stdout, _ = cli("report", out)
    assert code == 0 and "repro-toy is invalid" in stdout


def test_validate_runs_the_gold_reproduction(environment, confined, tmp_path, cli):
    code, _, err = cli("validate", FIXTURES / "repro-toy")
    assert code == 0
    assert "repro-toy: gold reproduction passed" in err
    # The gold run's number beside the target it is graded against, and where that comes from.
    assert re.search(
        r"pi_estimate: gold 3\.1\d* over 10 runs; target 3\.142 \+- 2 x 0\.04 \(gold\)", err
    )
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURES, tasks)
    script = tasks / "repro-toy" / "reference" / "darts.py"
    script.write_text(
        script.read_text().replace("def main():\n", "def main():\n    raise SystemExit(3)\n")
    )
    code, stdout, err = cli("validate", tasks / "repro-toy")
    assert code == 1
    assert "FAIL  repro-toy" in err
    (problem,) = [line for line in stdout.splitlines() if "gold reproduction fails" in line]
    assert problem.strip().startswith(f"{tasks / 'repro-toy' / 'task.yaml'}: ")
    assert "train_debug: rerun 1 of 2 (RCB_SEED=" in problem
    assert "bash reproduce.sh exited with status 3" in problem


def test_validate_mutants_runs_the_adversaries_and_names_the_one_that_escapes(
    environment, confined, cli
):
    # The fixture's splits are the agent's own word (it ships no data/): a run that
    # reports invented split hashes cannot be caught there, and validate says so.
    code, stdout, err = cli("validate", "--mutants", FIXTURES / "repro-toy")
    assert code == 1 and "FAIL  repro-toy" in err
    escaped = [line.strip() for line in stdout.splitlines() if "adversary baseline:" in line]
    assert len(escaped) == 1, stdout
    assert escaped[0].startswith(f"{FIXTURES / 'repro-toy' / 'expected.yaml'}: adversary ")
    assert "baseline:split-liar passes every stage" in escaped[0]


def test_a_replayed_agent_from_the_command_line(environment, confined, tmp_path, cli):
    replay = tmp_path / "agent.jsonl"
    turns = [turn_to_dict(t) for t in reference_turns(load_task(FIXTURES / "repro-toy"))]
    replay.write_text(json.dumps({"task": "repro-toy", "model": "scripted", "turns": turns}) + "\n")
    out = tmp_path / "out"
    code, _, _ = cli(
        "reproduce", "--model", f"replay:{replay}", "--tasks-dir", FIXTURES, "--out", out
    )
    assert code == 0
    (record,) = read_reproduction_records(out / REPRODUCTION_FILE)
    assert record.model == "scripted" and record.failed_stage is None
    assert "method_accuracy" not in record.dimensions  # no judge: not graded


class _Interrupting(AgentModel):
    """Plays a script, then Ctrl-C in the middle of the attempt."""

    name = "openai/interrupted"

    def __init__(self, turns: list[dict[str, Any]]) -> None:
        self.turns = turns

    def start(self, task, sample):
        turns = [turn_from_dict(t, i) for i, t in enumerate(self.turns)]

        class Session(ScriptedSession):
            def respond(self, messages, tools):
                if not self._turns:
                    raise KeyboardInterrupt
                return super().respond(messages, tools)

        return Session(turns)


def test_ctrl_c_leaves_no_sandbox_and_the_run_resumes(environment, confined, tmp_path, monkeypatch):
    opened = []
    original = LocalBackend.open_clean

    def recording(self, task, **options):
        sandbox = original(self, task, **options)
        opened.append(Path(sandbox.workspace))
        return sandbox

    monkeypatch.setattr(LocalBackend, "open_clean", recording)
    config = ReproduceConfig(models=[], out=tmp_path / "out", tasks_dir=FIXTURES, progress=False)
    with pytest.raises(KeyboardInterrupt):
        reproduce(config, agents=[_Interrupting(AGENTS["full"][:3])])
    assert opened and not any(path.exists() for path in opened)
    assert read_reproduction_records(tmp_path / "out" / REPRODUCTION_FILE) == []
    summary = reproduce(config, agents=[_Interrupting(AGENTS["full"])])
    assert summary.done == 1
    (record,) = read_reproduction_records(tmp_path / "out" / REPRODUCTION_FILE)
    assert record.failed_stage is None


def test_agent_commands_stay_in_the_sandbox(environment, confined, provider, tmp_path, monkeypatch):
    secret = "sk-test-never-in-a-sandbox-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    probes = {
        "environment": "env; cat /proc/self/environ",
        "network": "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=5)\"",
        "host files": f"ls {Path.home()} && cat {Path.home()}/.bashrc",
        "outside the workspace": "touch /usr/rcb-was-here",
    }
    hostile = scripted()
    hostile[2]["tool_calls"][:0] = [call("run", command=c) for c in probes.values()]
    config = ReproduceConfig(models=[], out=tmp_path / "out", tasks_dir=FIXTURES, progress=False)
    reproduce(config, agents=[LiteLLMAgent(provider.script("hostile", hostile))])
    (record,) = read_reproduction_records(tmp_path / "out" / REPRODUCTION_FILE)
    log = (tmp_path / "out" / record.log_dir / "steps.jsonl").read_text()
    assert secret not in log
    steps = [json.loads(line) for line in log.splitlines()]
    runs = [s for s in steps if s["event"] == "tool" and s["name"] == "run"]
    results = {
        name: next(r for r in runs if r["arguments"] == json.dumps({"command": c}))
        for name, c in probes.items()
    }
    assert (
        results["environment"]["returncode"] == 0
        and "PIP_NO_INDEX=1" in results["environment"]["stdout"]
    )
    for name in ("network", "host files", "outside the workspace"):
        assert results[name]["returncode"] != 0, name
    assert not Path("/usr/rcb-was-here").exists()
    assert record.failed_stage is None  # the attempt itself went on as usual
