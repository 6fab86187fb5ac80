"""Agent mode for snippets (rcb evaluate --agent-turns K): the model sees the task's visible
checks run on its block and may rewrite it; the hidden checks decide and never enter a
sandbox whose output the model sees; reports put pass@1 beside pass-after-K."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

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


def run(tasks_dir, out, agent_turns: int, *models: Scripted, tasks: str = "casetoy"):
    config = EvalConfig(
        models=[],
        out=out,
        tasks_dir=tasks_dir,
        tasks=tasks,
        agent_turns=agent_turns,
        progress=False,
    )
    evaluate(config, model_objects=list(models))
    return {(r.model, r.snippet, r.agent_turns): r for r in read_records(out / RESULTS_FILE)}


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
    # The rewrite's prompt shows the visible check's outcome and never a hidden check.
    retry = model.prompts["affine"][1]
    assert "checks/test_visible.py::test_affine_visible: failed" in retry
    assert "test_toy.py" not in retry and "test_scale" not in retry
    assert wrong.strip() in retry
    (feedback,) = (tmp_path / "out" / "logs").rglob("turn-1-feedback.md")
    assert "1 visible check(s)" in feedback.read_text()

    # Passing the visible test is not enough: the hidden ones decide.
    assert records[("overfit", "affine", 2)].status == "fail"
    assert records[("overfit", "affine", 2)].turns_used == 0
    assert len(overfit.prompts["affine"]) == 1  # not asked again once the visible test passed
    # A snippet whose visible checks pass is not rewritten.
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


def test_what_the_models_code_can_see_in_agent_mode(fixture_tasks, tmp_path):
    """The code under test runs where no check is: a block that lists its folder and
    raises shows the model its own run, and no check file or hidden expected value."""
    snoop = "import os\nraise RuntimeError('SEEN ' + repr(sorted(os.listdir('.'))))\n"
    model = Scripted("snoop", {"affine": [snoop, "y = a * x + b\n"]})
    records = run(fixture_tasks, tmp_path / "out", 1, model)
    retry = model.prompts["affine"][1]
    assert "SEEN" in retry and "'cases'" in retry and "'src'" in retry
    seen = retry[retry.index("SEEN") :].split("\n", 1)[0]
    assert "checks" not in seen and "reference" not in seen
    assert "test_toy" not in retry and "test_scale" not in retry
    assert records[("snoop", "affine", 1)].status == "pass"


def test_in_process_tasks_give_no_feedback(fixture_tasks, tmp_path):
    """With in-process tests the model's code would share a sandbox with every test, so
    agent mode shows nothing: the refined record is the first answer's."""
    model = Scripted("m", {"affine": ["y = a * x - b\n", "y = a * x + b\n"]})
    records = run(fixture_tasks, tmp_path / "out", 2, model, tasks="toy")
    final = records[("m", "affine", 2)]
    assert final.status == "fail" and final.turns_used == 0 and final.visible_tests == 0
    assert len(model.prompts["affine"]) == 1
