"""Agent mode for snippets (rcb evaluate --agent-turns K): the model sees a visible subset
of the tests run on its block and may rewrite it; the hidden tests decide; reports put
pass@1 beside pass-after-K."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from rcb_action.agent import visible_tests
from rcb_action.models import Completion, CompletionRequest, Model
from rcb_action.models._builtin import fenced
from rcb_action.results import RESULTS_FILE, read_records
from rcb_action.runner import EvalConfig, evaluate

pytestmark = pytest.mark.slow


class Scripted(Model):
    """Answers each snippet from a list (one answer per call), else with the true code;
    keeps every prompt it is sent."""

    def __init__(self, name: str, answers: dict[str, list[str]]) -> None:
        self.name = name
        self.answers = {k: list(v) for k, v in answers.items()}
        self.prompts: dict[str, list[str]] = defaultdict(list)

    def complete(self, request: CompletionRequest) -> Completion:
        self.prompts[request.snippet].append(request.prompt.text)
        queue = self.answers.get(request.snippet)
        if queue:
            return Completion(text=fenced(queue.pop(0)), tokens_in=10, tokens_out=5)
        return Completion(text=fenced("".join(request.task.reference_body(request.snippet))))


def run(tasks_dir, out, agent_turns: int, *models: Scripted):
    config = EvalConfig(
        models=[],
        out=out,
        tasks_dir=tasks_dir,
        tasks="toy",
        agent_turns=agent_turns,
        progress=False,
    )
    evaluate(config, model_objects=list(models))
    return {(r.model, r.snippet, r.agent_turns): r for r in read_records(out / RESULTS_FILE)}


def test_visible_tests_are_the_first_half():
    assert visible_tests(["c", "a", "b"]) == ["a"]
    assert visible_tests(["d", "c", "b", "a"]) == ["a", "b"]
    assert visible_tests(["only"]) == ["only"]


def test_refining_after_the_visible_tests(fixture_tasks, tmp_path, cli):
    wrong, right = "y = a * x - b\n", "y = a * x + b\n"
    # Passes the visible (array) test and fails the hidden scalar ones.
    overfitting = "y = a * x + b if hasattr(x, 'shape') else 0.0\n"
    model = Scripted("scripted", {"affine": [wrong, right]})
    overfit = Scripted("overfit", {"affine": [overfitting]})
    records = run(fixture_tasks, tmp_path / "out", 2, model, overfit)

    first, final = records[("scripted", "affine", 0)], records[("scripted", "affine", 2)]
    assert first.status == "fail" and final.status == "pass"
    assert final.turns_used == 1 and final.first_status == "fail"
    assert final.tokens_in == 20  # both answers counted
    assert final.prompt_sha == first.prompt_sha
    # The rewrite's prompt shows the visible test's outcome and never a hidden test.
    retry = model.prompts["affine"][1]
    assert "tests/test_toy.py::test_affine: failed" in retry
    assert "test_scale" not in retry and "test_shift" not in retry
    assert wrong.strip() in retry
    logs = tmp_path / "out" / "logs" / "scripted" / "toy" / "affine" / "s0-k2"
    assert "1 visible test(s)" in (logs / "turn-1-feedback.md").read_text()

    # Passing the visible test is not enough: the hidden ones decide.
    assert records[("overfit", "affine", 2)].status == "fail"
    assert records[("overfit", "affine", 2)].turns_used == 0
    assert len(overfit.prompts["affine"]) == 1  # not asked again once the visible test passed
    # A snippet whose tests are all visible and pass is not rewritten.
    assert records[("scripted", "scale", 2)].status == "pass"
    assert records[("scripted", "scale", 2)].turns_used == 0

    code, stdout, _ = cli("report", tmp_path / "out", "--json", tmp_path / "r.json")
    assert code == 0 and "pass after K" in stdout
    report = json.loads((tmp_path / "r.json").read_text())
    entry = report["models"]["scripted"]
    mode = entry["agent_mode"]["2"]
    assert mode["fixed"] == 1 and mode["broken"] == 0
    assert mode["pass_rate_after_k"] > mode["pass_rate_at_1"]
    # The headline is pass@1: the refined attempts never enter it.
    assert entry["pass_rate"] == mode["pass_rate_at_1"]


def test_agent_mode_reuses_a_recorded_first_answer_and_resumes(fixture_tasks, tmp_path):
    out = tmp_path / "out"
    run(fixture_tasks, out, 0, Scripted("m", {"affine": ["y = a * x - b\n"]}))
    model = Scripted("m", {"affine": ["y = a * x + b\n"]})
    records = run(fixture_tasks, out, 1, model)
    assert records[("m", "affine", 0)].status == "fail"
    assert records[("m", "affine", 1)].status == "pass"
    assert len(model.prompts["affine"]) == 1  # only the rewrite was asked for
    lines = len((out / RESULTS_FILE).read_text().splitlines())
    run(fixture_tasks, out, 1, Scripted("m", {}))
    assert len((out / RESULTS_FILE).read_text().splitlines()) == lines
