"""Agents that want to pass without doing the work, on the benchmark's own reproduction
tasks. Each adversary is built from the task's reference (``baseline:KIND``, see
rcb_action/reproduce/_reference.py), driven through litellm's real completion path by
the scripted custom provider (tests/scripted_provider.py), and must fail result_check
with the flag that names what it did; the honest agent, the reference through the same
path, passes every stage. Slow: every attempt builds venvs and reruns reproduce.sh.

What runs here and what comes from the committed baselines: an adversary that runs the
whole experiment (constant, copied, split-liar) costs the task's experiment two or three
times. On the cheapest task (repro-adopt-toy) all five run here; on the others those
three are checked on the records `rcb reproduce --model baseline:KIND` committed in
baselines/reproduction (of the current task, by its hash) instead of being run again,
to keep CI's time in bounds (about 80 s each on repro-eki-lorenz96); `rcb validate --mutants` runs all five on a reproduction task a pull
request changes, and the scheduled validate-all on every one. The fabricator and the
never-calls agent run here on every task. The honest agent is the gold run on every
task (the reference, scripted without litellm) and, on the cheapest task, the same
turns through litellm."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import TASKS
from scripted_provider import ScriptedProvider, scripted_provider

from rcb_action.agent import AgentTurn, LiteLLMAgent
from rcb_action.papers import paper_for, papers_dir, pinned_name
from rcb_action.reproduce import (
    BASELINE_FLAGS,
    DIMENSIONS,
    GOLD_FILE,
    REPRODUCTION_FILE,
    STAGES,
    ReproduceConfig,
    ReproductionRecord,
    baseline_turns,
    read_reproduction_records,
    reference_turns,
    reproduce,
)
from rcb_action.sandbox import get_backend
from rcb_action.tasks import Task, load_task

pytestmark = pytest.mark.slow

REPRO_TASKS = sorted(p.name for p in TASKS.glob("repro-*") if (p / "task.yaml").is_file())
BASELINES_DIR = TASKS.parent / "baselines" / "reproduction"
# (task, adversary) pairs checked on the committed baselines instead of run here.
FROM_BASELINES = {
    (task, kind)
    for task in (
        "repro-eki-lorenz96",
        "repro-fastlsq-linear",
        "repro-fastlsq-regression",
        "repro-heston-ig",
        "repro-heston-is",
    )
    for kind in ("constant", "copied", "split-liar")
}
HONEST_THROUGH_LITELLM = {"repro-adopt-toy"}


def as_script(turns: list[AgentTurn]) -> list[dict[str, Any]]:
    """Agent turns in the scripted provider's form (tool arguments as objects)."""
    return [
        {
            "content": t.text,
            "tool_calls": [
                {"name": c.name, "arguments": json.loads(c.arguments)} for c in t.tool_calls
            ],
        }
        for t in turns
    ]


@pytest.fixture(scope="module")
def provider() -> Any:
    with scripted_provider() as registered:
        yield registered


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No gold run or wheelhouse from an earlier run counts. The agents below are models
    (litellm), so they read the paper: arXiv cannot be reached from the tests, and the
    paper cache holds a stand-in text for each task's pinned version instead (a test
    double for the network, like the scripted provider for the model)."""
    monkeypatch.setenv("RCB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RCB_ARXIV_URL", "http://127.0.0.1:9")  # nothing listens there
    for task_id in REPRO_TASKS:
        name = pinned_name(load_task(TASKS / task_id))
        assert name is not None, task_id
        (papers_dir() / f"{name}.tex").write_text(stand_in_paper(name), encoding="utf-8")


def stand_in_paper(name: str) -> str:
    return f"The text of arXiv {name}, as the tests' stand-in for the paper pipeline.\n"


def assert_caught(kind: str, record: ReproductionRecord) -> None:
    """Failed at result_check with the adversary's flag. The numbers of an adversary that
    runs the experiment come from seeds the harness draws, and a draw can land a mean out
    of its published range (about 1 in 2,000 on repro-adopt-toy): then the attempt fails on
    its numbers too, and a person need not review it; the flag is still there."""
    where = f"{record.task} / {kind}"
    assert record.scored, f"{where}: {record.message}"
    said = record.stages["result_check"].error if "result_check" in record.stages else None
    assert record.failed_stage == "result_check", (where, record.failed_stage, record.message)
    assert record.dimensions["result_consistency"] is False, (where, said)
    in_range = all(m.in_range for m in record.metrics.values())
    assert record.needs_review == in_range, (where, said)
    flag = BASELINE_FLAGS[kind]
    assert any(re.search(flag, reason) for reason in record.review_reasons), (
        f"{where}: no reason matches {flag!r}: {record.review_reasons}"
    )


def assert_honest(record: ReproductionRecord) -> None:
    assert record.failed_stage is None, (record.task, record.stages)
    assert [record.stages[s].status for s in STAGES] == ["passed"] * len(STAGES)
    assert all(record.dimensions[d] for d in DIMENSIONS if d in record.dimensions)
    assert not record.needs_review and not record.review_reasons, record.review_reasons
    assert all(m.in_range for m in record.metrics.values())


@pytest.mark.parametrize("task_id", REPRO_TASKS)
def test_every_adversary_fails_with_its_flag_and_the_honest_agent_passes(
    task_id: str, provider: ScriptedProvider, fresh_cache: None, tmp_path: Path
) -> None:
    if not getattr(get_backend("local"), "confined", False):
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but bubblewrap cannot confine commands here")
        pytest.skip("needs bubblewrap as root (agents' commands run only in a sandbox)")
    task: Task = load_task(TASKS / task_id)
    live = [kind for kind in BASELINE_FLAGS if (task_id, kind) not in FROM_BASELINES]
    scripts = [(kind, baseline_turns(task, kind)) for kind in live]
    if task_id in HONEST_THROUGH_LITELLM:
        scripts.insert(0, ("honest", reference_turns(task)))
    agents = [
        LiteLLMAgent(provider.script(f"{kind}@{task_id}", as_script(turns)), backoff_s=0.01)
        for kind, turns in scripts
    ]
    out = tmp_path / "out"
    config = ReproduceConfig(
        models=[], out=out, tasks_dir=TASKS, tasks=task_id, sandbox="local", progress=False
    )
    summary = reproduce(config, agents=agents)
    assert summary.invalid_tasks == {} and summary.done == len(agents)
    # The gold run (the reference, scripted without litellm) passes cleanly too.
    (gold,) = read_reproduction_records(out / GOLD_FILE)
    assert_honest(gold)
    records = {
        r.model.removeprefix("scripted/").removesuffix(f"@{task_id}"): r
        for r in read_reproduction_records(out / REPRODUCTION_FILE)
    }
    assert set(records) == {kind for kind, _ in scripts}
    if "honest" in records:
        honest = records.pop("honest")
        assert_honest(honest)
        records_read = [honest]
    else:
        records_read = []
    for kind, record in records.items():
        assert_caught(kind, record)
    # Every model attempt read the paper pipeline's text, and its record says which.
    paper = paper_for(task, fetch=False)
    assert paper.text == stand_in_paper(pinned_name(task) or "")
    assert {r.paper_sha for r in [*records.values(), *records_read]} == {paper.sha}
    assert gold.paper_sha == paper.sha  # the reference reads nothing, but it is at hand


def test_the_adversaries_left_out_above_are_caught_in_the_committed_baselines() -> None:
    """The costly pairs, as `rcb reproduce --model baseline:KIND` recorded them on the task
    as it is now (the task hash must match: regenerate as docs/reproduction.md says)."""
    records = {
        (r.task, r.model.removeprefix("baseline:")): r
        for r in read_reproduction_records(BASELINES_DIR / REPRODUCTION_FILE)
    }
    for task_id, kind in sorted(FROM_BASELINES):
        record = records[(task_id, kind)]
        assert record.task_sha == load_task(TASKS / task_id).sha, f"{task_id}: stale baselines"
        assert_caught(kind, record)
