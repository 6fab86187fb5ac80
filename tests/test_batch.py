"""``rcb evaluate --batch``: prompts through the provider's batch API (a fake of
OpenAI's Files and Batch API on 127.0.0.1, driven by litellm's real batch calls)."""

from __future__ import annotations

import json
import os
import signal
import threading

import pytest
from conftest import FIXTURE_TASKS
from fake_openai import FakeOpenAI

from rcb_action.models import fenced, load_registry
from rcb_action.prompts import build_prompt
from rcb_action.report import build_report
from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, evaluate
from rcb_action.tasks import load_task

MODEL = "openai/gpt-4o"


def _reference_answers() -> dict[str, str]:
    task = load_task(FIXTURE_TASKS / "casetoy")
    return {
        build_prompt(task, name, paper="without").text: fenced("".join(task.reference_body(name)))
        for name in task.snippet_names()
    }


@pytest.fixture
def openai_fake(monkeypatch):
    answers = _reference_answers()

    def start(**options) -> FakeOpenAI:
        fake = FakeOpenAI(lambda text: answers.get(text, "no idea"), **options)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_BASE", fake.url)
        return fake

    return start


def _config(out, **options) -> EvalConfig:
    return EvalConfig(
        models=[MODEL],
        out=out,
        tasks_dir=FIXTURE_TASKS,
        tasks="casetoy",
        paper="without",
        batch=True,
        batch_poll_s=0.05,
        progress=False,
        **options,
    )


def test_a_batch_run_scores_every_answer_and_records_the_batch(tmp_path, openai_fake):
    out = tmp_path / "out"
    with openai_fake(auto_complete=True) as fake:
        summary = evaluate(_config(out, workers=2))
    assert fake.batches_created() == 1 and summary.done == 5
    # No live completion was made: every answer came through the batch.
    assert not [c for c in fake.calls if c[1].endswith("/chat/completions")]
    records = ResultStore(out).records()
    assert len(records) == 5 and {r.status for r in records} == {"pass"}
    info = load_registry().get(MODEL)
    for record in records:
        assert record.batch_id == "batch_0"
        list_price = (
            record.tokens_in * info.input_cost_per_mtok
            + record.tokens_out * info.output_cost_per_mtok
        ) / 1e6
        assert record.cost_usd == pytest.approx(list_price / 2)  # batches bill half
    state = json.loads((out / "batches").glob("*.json").__next__().read_text())
    assert [b["id"] for b in state["batches"]] == ["batch_0"]
    report = build_report(records, load_registry())
    assert report.models[MODEL].batched == 5


def test_an_interrupted_batch_run_picks_up_the_same_batch(tmp_path, openai_fake):
    out = tmp_path / "out"
    with openai_fake() as fake:
        timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGTERM))
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                evaluate(_config(out, workers=1))  # polls a batch that is still in progress
        finally:
            timer.cancel()
        assert fake.batches_created() == 1
        assert not (out / "results.jsonl").exists() or not ResultStore(out).records()
        fake.complete_all()
        evaluate(_config(out, workers=1))
        assert fake.batches_created() == 1  # the recorded batch, not a second one
        evaluate(_config(out, workers=1))  # nothing left: no batch, no call
        assert fake.batches_created() == 1
    records = ResultStore(out).records()
    keys = [(r.task, r.snippet, r.sample) for r in records]
    assert len(keys) == len(set(keys)) == 5
    assert {r.status for r in records} == {"pass"} and {r.batch_id for r in records} == {"batch_0"}


def test_answers_a_batch_already_paid_for_are_scored_past_the_cost_cap(tmp_path, openai_fake):
    out = tmp_path / "out"
    with openai_fake(auto_complete=True) as fake:
        summary = evaluate(_config(out, workers=1, max_cost_usd=1e-9))
        assert fake.batches_created() == 1
        # The cap is now reached: a rerun with more work sends no new batch.
        more = _config(out, workers=1, max_cost_usd=1e-9)
        more.tasks = "casetoy,toy"
        again = evaluate(more)
    assert summary.done == 5 and summary.not_started == 0
    assert again.done == 0 and again.not_started == 5 and fake.batches_created() == 1
    assert len(ResultStore(out).records()) == 5


def test_batch_refusals_are_one_line(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-a-key")
    code, _, err = cli(
        "evaluate", "--batch", "--model", "anthropic/claude-3-7-sonnet-20250219", "--tasks-dir",
        FIXTURE_TASKS, "--tasks", "casetoy", "--paper", "without", "--out", tmp_path / "o",
    )  # fmt: skip
    assert code == 2 and "--batch: model anthropic/claude-3-7-sonnet-20250219:" in err
    code, _, err = cli(
        "evaluate", "--batch", "--agent-turns", "2", "--model", "null", "--tasks-dir",
        FIXTURE_TASKS, "--tasks", "casetoy", "--out", tmp_path / "o",
    )  # fmt: skip
    assert code == 2 and "--batch with --agent-turns" in err
