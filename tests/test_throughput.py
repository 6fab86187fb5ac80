"""Model calls and test runs in flight apart, rate limits, the dry run's estimate and
the cost cap, through litellm's real completion path (a custom provider on no network,
tests/answering_provider.py)."""

from __future__ import annotations

import email.utils
import time
from pathlib import Path

import pytest
from answering_provider import answering_provider
from conftest import FIXTURE_TASKS

from rcb_action.models import (
    CallLimiter,
    LiteLLMModel,
    NullModel,
    ReferenceModel,
    import_litellm,
    retry_after_s,
)
from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, estimate, evaluate, in_lanes, plan
from rcb_action.tasks import load_tasks

litellm = import_litellm()


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_call_limit_halves_on_a_rate_limit_and_grows_back_one_by_one():
    limiter = CallLimiter(8, clock=FakeClock())
    limiter.rate_limited_for(None)
    assert limiter.limit == 4
    limiter.rate_limited_for(None)
    limiter.rate_limited_for(None)
    limiter.rate_limited_for(None)
    assert limiter.limit == 1  # never below one
    limiter.succeeded()
    assert limiter.limit == 2  # a run of successes as long as the limit adds one
    limiter.succeeded()
    assert limiter.limit == 2
    limiter.succeeded()
    assert limiter.limit == 3
    for _ in range(50):
        limiter.succeeded()
    assert limiter.limit == 8  # up to the ceiling, not beyond


def test_retry_after_pauses_every_new_call_until_it_has_passed():
    clock = FakeClock()
    limiter = CallLimiter(4, clock=clock)
    assert limiter.wait_s() == 0
    limiter.rate_limited_for(30.0)
    assert limiter.wait_s() == pytest.approx(30.0)
    clock.now += 29.0
    assert limiter.wait_s() == pytest.approx(1.0)
    clock.now += 1.0
    assert limiter.wait_s() == 0
    limiter.rate_limited_for(10_000.0)
    assert limiter.wait_s() == pytest.approx(300.0)  # capped at five minutes


def test_a_tokens_per_minute_budget_holds_calls_to_the_next_minute():
    clock = FakeClock()
    limiter = CallLimiter(4, tokens_per_minute=1000, clock=clock)
    with limiter.slot(600):
        pass
    assert limiter.wait_s(300) == 0
    assert limiter.wait_s(600) == pytest.approx(60.0)
    clock.now += 60.5
    assert limiter.wait_s(600) == 0
    # A call larger than the whole budget still runs, alone in its minute.
    assert CallLimiter(4, tokens_per_minute=1000, clock=clock).wait_s(5000) == 0


def test_calls_in_flight_are_bounded_by_the_limit():
    limiter = CallLimiter(2, clock=FakeClock())
    with limiter.slot(), limiter.slot():
        assert limiter.in_flight == 2
        assert limiter.wait_s() > 0
    assert limiter.wait_s() == 0


def _rate_limit(headers: dict[str, str] | None) -> Exception:
    return litellm.RateLimitError(
        message="slow down", llm_provider="answering", model="x", headers=headers
    )


def test_retry_after_is_read_in_each_form_providers_send():
    assert retry_after_s(_rate_limit({"retry-after": "2"})) == 2.0
    assert retry_after_s(_rate_limit({"Retry-After-Ms": "1500"})) == 1.5
    later = email.utils.formatdate(time.time() + 120, usegmt=True)
    assert 100 < retry_after_s(_rate_limit({"retry-after": later})) <= 121
    assert retry_after_s(_rate_limit(None)) is None
    assert retry_after_s(ValueError("no headers")) is None


def _tasks(names: str):
    return load_tasks(FIXTURE_TASKS, names)


def _config(out: Path, **options) -> EvalConfig:
    values = {
        "models": ["answering/coder"],
        "out": out,
        "tasks_dir": FIXTURE_TASKS,
        "tasks": "casetoy,toy",
        "paper": "without",
        "progress": False,
    }
    values.update(options)
    return EvalConfig(**values)


def test_model_calls_overlap_beyond_the_test_workers_and_never_beyond_the_concurrency(tmp_path):
    with answering_provider(latency_s=0.4) as provider:
        prompts = provider.answer_with_references(_tasks("casetoy,toy"))
        summary = evaluate(_config(tmp_path / "out", workers=1, concurrency=4))
    assert summary.done == prompts == 10
    records = ResultStore(tmp_path / "out").records()
    assert {r.status for r in records} == {"pass"}
    # One test worker, yet several calls were in flight together; never more than 4.
    assert 2 <= provider.max_in_flight <= 4

    with answering_provider(latency_s=0.1) as provider:
        provider.answer_with_references(_tasks("casetoy,toy"))
        evaluate(_config(tmp_path / "out1", workers=2, concurrency=1))
    assert provider.max_in_flight == 1


def test_rate_limited_calls_back_off_and_every_attempt_is_recorded_once(tmp_path):
    with answering_provider(latency_s=0.05, retry_after_s=0.05) as provider:
        prompts = provider.answer_with_references(_tasks("casetoy,toy"), rate_limit_every=3)
        model = LiteLLMModel("answering/coder", max_concurrency=4, backoff_s=0.01)
        evaluate(_config(tmp_path / "out", workers=2), model_objects=[model])
    limited = (prompts + 2) // 3
    assert provider.rate_limited == limited
    assert model.limiter.rate_limited == limited
    assert provider.calls == prompts + limited
    records = ResultStore(tmp_path / "out").records()
    keys = [(r.task, r.snippet) for r in records]
    assert len(keys) == len(set(keys)) == prompts
    assert {r.status for r in records} == {"pass"}


def _priced_registry(tmp_path: Path) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n"
        "  answering/coder:\n"
        "    display_name: Answering coder\n"
        "    provider: answering\n"
        "    input_cost_per_mtok: 1000.0\n"
        "    output_cost_per_mtok: 4000.0\n",
        encoding="utf-8",
    )
    return path


def test_the_dry_run_estimate_matches_what_a_run_records(tmp_path, cli):
    registry = _priced_registry(tmp_path)
    out = tmp_path / "out"
    config = _config(out, registry_files=[registry], workers=2)
    with answering_provider() as provider:
        provider.answer_with_references(_tasks("casetoy,toy"))
        [guess] = estimate(config)
        assert provider.calls == 0  # the dry run calls nothing
        code, table, _ = cli(
            "evaluate", "--dry-run", "--model", "answering/coder", "--tasks-dir", FIXTURE_TASKS,
            "--tasks", "casetoy,toy", "--paper", "without", "--out", out, "--registry", registry,
        )  # fmt: skip
        assert code == 0 and provider.calls == 0
        assert not (out / "results.jsonl").exists()
        evaluate(config)
    records = ResultStore(out).records()
    assert guess.attempts == guess.calls == len(records) == provider.calls == 10
    tokens_in = sum(r.tokens_in for r in records)
    tokens_out = sum(r.tokens_out for r in records)
    cost = sum(r.cost_usd for r in records)
    assert tokens_in > 0 and tokens_out > 0 and cost > 0
    assert guess.tokens_in == pytest.approx(tokens_in, rel=0.10)
    assert guess.tokens_out == pytest.approx(tokens_out, rel=0.10)
    assert guess.cost_usd == pytest.approx(cost, rel=0.10)
    assert "answering/coder" in table and f"{guess.tokens_in:,}" in table
    # Resumed: nothing is left, so nothing is estimated.
    [after] = estimate(config)
    assert after.attempts == after.calls == 0 and after.cost_usd == 0


def test_max_cost_stops_new_calls_and_a_higher_cap_resumes(tmp_path, cli):
    registry = _priced_registry(tmp_path)
    out = tmp_path / "out"
    with answering_provider() as provider:
        provider.answer_with_references(_tasks("casetoy,toy"))
        one_call = estimate(_config(out, registry_files=[registry]))[0].cost_usd / 10
        cap = 2.5 * one_call

        def run(max_cost: float):
            config = _config(
                out, registry_files=[registry], workers=1, concurrency=1, max_cost_usd=max_cost
            )
            return evaluate(config)

        first = run(cap)
        records = ResultStore(out).records()
        # Calls stop once the recorded cost reaches the cap (one at a time here: three calls).
        assert len(records) == provider.calls == 3
        assert first.not_started == 7
        assert sum(r.cost_usd for r in records) >= cap
        again = run(cap)  # the same cap: already reached, no call at all
        assert provider.calls == 3 and again.not_started == 7
        final = run(100 * cap)
        assert final.not_started == 0 and provider.calls == 10
    records = ResultStore(out).records()
    keys = [(r.task, r.snippet) for r in records]
    assert len(keys) == len(set(keys)) == 10
    assert {r.status for r in records} == {"pass"}
    code, _, err = cli(
        "evaluate", "--model", "null", "--tasks-dir", FIXTURE_TASKS, "--tasks", "toy",
        "--max-cost", "-1", "--out", tmp_path / "o2", "--no-progress",
    )  # fmt: skip
    assert code == 2 and "--max-cost must be 0 or more" in err


def test_the_test_workers_start_on_tasks_of_their_own():
    """Attempts go to the test workers in lanes, one per worker, each holding whole tasks:
    the first attempts are of different tasks (so their reference runs overlap instead of
    one worker waiting on the other's), each task's attempts keep their order, and no
    attempt is lost or doubled."""
    tasks = load_tasks(FIXTURE_TASKS)
    config = EvalConfig(models=["reference", "null"], tasks_dir=FIXTURE_TASKS, workers=2)
    items = plan(config, [ReferenceModel(), NullModel()], tasks)
    assert len({item.task.id for item in items[:2]}) == 1  # plan order: one task at a time
    lanes = in_lanes(items, 2)
    assert sorted(map(id, lanes)) == sorted(map(id, items))
    assert len({item.task.id for item in lanes[:2]}) == 2
    for task in tasks:
        assert [i for i in lanes if i.task is task] == [i for i in items if i.task is task]
    assert in_lanes(items, 1) == items
