"""End to end through the real pipeline: prompts, models, splicing, sandbox, scoring, store."""

import json
import re
import shutil
from pathlib import Path

from conftest import FIXTURE_TASKS, fenced, write_replay

from rcb_action.models import LiteLLMModel, load_registry
from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, evaluate


def _records(out: Path):
    return {(r.task, r.snippet, r.model, r.sample): r for r in ResultStore(out).records()}


def test_reference_and_null_on_fixture(tmp_path, cli):
    out = tmp_path / "out"
    code, stdout, err = cli(
        "evaluate", "--tasks-dir", FIXTURE_TASKS, "--out", out, "--workers", "2", "--no-progress"
    )
    assert code == 0
    assert re.search(r"rcb: 28 attempt\(s\) in \d+ s \(\d+ s of it building environments\)", err)
    records = _records(out)
    # two models; toy and casetoy have 5 snippets, guard and caseguard 2
    assert len(records) == 2 * (5 + 2 + 5 + 2)
    assert {r.grading for r in records.values() if r.task.startswith("case")} == {"cases"}
    assert {r.grading for r in records.values() if not r.task.startswith("case")} == {"in-process"}
    for (_task, snippet, model, _), record in records.items():
        assert record.status == ("pass" if model == "reference" else "fail"), (
            snippet,
            model,
            record.message,
        )
        if model == "reference":
            assert record.tests_ran == record.tests_expected > 0
    assert "reference" in stdout and "100.0" in stdout


HOSTILE_OK = {  # snippet -> (code, expected failure class)
    "scale": [
        ("y = a * undefined_thing", "name"),
        ("y = a * x + 1", "assertion"),
        ("import not_a_module_here\ny = a * x", "import"),
    ],
    "shift": [("y = y.no_such_attribute + b", "attribute"), ("y = y + int('b')", "value")],
    "norm": [
        ("return len(5)", "type"),
        ("return [][1]", "index_key"),
        ("x = bytearray(10**10)\nreturn 0.0", "memory"),
    ],
    "slow sum": [("import os\nos._exit(0)", "sandbox_violation"), ("total = (", "syntax")],
}


def test_failure_classes_from_the_run(tmp_path, cli):
    rows = []
    for snippet, cases in HOSTILE_OK.items():
        for sample, (code, _) in enumerate(cases):
            rows.append(
                {"task": "toy", "snippet": snippet, "sample": sample, "completion": fenced(code)}
            )
    rows.append(
        {"task": "toy", "snippet": "affine", "sample": 0, "completion": "I cannot do this."}
    )
    replay = write_replay(tmp_path / "hostile.jsonl", rows)
    out = tmp_path / "out"
    code, _, _ = cli(
        "evaluate", "--model", f"replay:{replay}", "--tasks-dir", FIXTURE_TASKS, "--tasks", "toy", "--out", out,
        "--samples", "3", "--workers", "2", "--no-progress",
    )  # fmt: skip
    assert code == 0
    records = _records(out)
    for snippet, cases in HOSTILE_OK.items():
        for sample, (_, expected) in enumerate(cases):
            record = records[("toy", snippet, "replay:hostile", sample)]
            assert record.status == "fail"
            assert record.failure_class == expected, (snippet, sample, record.message)
    assert records[("toy", "affine", "replay:hostile", 0)].failure_class == "no_code"
    # Snippets and samples absent from the replay file are no_code too.
    assert records[("toy", "affine", "replay:hostile", 2)].failure_class == "no_code"


def test_timeout_is_a_failure_class(tmp_path, fixture_tasks, cli):
    yaml_path = fixture_tasks / "toy" / "task.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("timeout_s: 30", "timeout_s: 2"))
    replay = write_replay(
        tmp_path / "loop.jsonl",
        [{"task": "toy", "snippet": "slow sum", "completion": fenced("while True:\n    pass")}],
    )
    out = tmp_path / "out"
    code, _, _ = cli(
        "evaluate", "--model", f"replay:{replay}", "--tasks-dir", fixture_tasks, "--tasks", "toy",
        "--out", out, "--no-progress", "--workers", "1",
    )  # fmt: skip
    assert code == 0
    record = _records(out)[("toy", "slow sum", "replay:loop", 0)]
    assert record.failure_class == "timeout"
    assert record.duration_test_s < 10


def test_litellm_path_retries_and_records_usage(tmp_path):
    registry = load_registry()
    answers = {
        "affine": fenced("y = a * x\ny = y + b"),
        "scale": fenced("y = a * x"),
        "shift": "The shift adds b, but I will not write code.",
        "norm": fenced("return float(np.sqrt(sum(square(v) for v in x)))"),
        "slow sum": fenced("for value in values:\n    total += value"),
    }
    # Work is planned in snippet file order; the first call meets an injected rate limit.
    order = ["affine", "scale", "shift", "norm", "slow sum"]
    mocks = ["litellm.RateLimitError"] + [answers[n] for n in order]
    model = LiteLLMModel(
        "openai/gpt-4o", registry.get("openai/gpt-4o"), backoff_s=0.01, mock_responses=mocks
    )
    out = tmp_path / "out"
    config = EvalConfig(
        models=["openai/gpt-4o"],
        out=out,
        tasks_dir=FIXTURE_TASKS,
        tasks="toy",
        workers=1,
        concurrency=1,  # the mocks are taken in call order
        progress=False,
    )
    evaluate(config, model_objects=[model])
    assert model.retries == 1
    records = _records(out)
    assert {n: records[("toy", n, "openai/gpt-4o", 0)].status for n in order} == {
        "affine": "pass", "scale": "pass", "shift": "fail", "norm": "pass", "slow sum": "pass",
    }  # fmt: skip
    shift = records[("toy", "shift", "openai/gpt-4o", 0)]
    assert shift.failure_class == "no_code"
    for record in records.values():
        assert record.tokens_in > 0 and record.tokens_out > 0
        assert record.cost_usd > 0


def test_rerun_with_nothing_changed_does_nothing(tmp_path, cli):
    out = tmp_path / "out"
    args = (
        "evaluate",
        "--tasks-dir",
        FIXTURE_TASKS,
        "--tasks",
        "toy",
        "--out",
        out,
        "--no-progress",
    )
    assert cli(*args)[0] == 0
    before = (out / "results.jsonl").read_bytes()
    code, _, err = cli(*args)
    assert code == 0
    assert "nothing to do" in err
    assert (out / "results.jsonl").read_bytes() == before


def test_changed_task_reruns_only_that_task(tmp_path, fixture_tasks, cli):
    out = tmp_path / "out"
    args = (
        "evaluate",
        "--model",
        "reference",
        "--tasks-dir",
        fixture_tasks,
        "--out",
        out,
        "--no-progress",
    )
    assert cli(*args)[0] == 0
    first = ResultStore(out).records()
    toy = [r for r in first if r.task == "toy"]
    assert toy and len(toy) < len(first)  # the guard task is in the run too
    helpers = fixture_tasks / "toy" / "src" / "helpers.py"  # a context file: in the prompt
    helpers.write_text(helpers.read_text() + "\n# A clarifying comment.\n")
    assert cli(*args)[0] == 0
    second = ResultStore(out).records()
    rerun = second[len(first) :]
    assert {r.task for r in rerun} == {"toy"} and len(rerun) == len(toy)  # only the changed task
    assert {r.prompt_sha for r in rerun}.isdisjoint({r.prompt_sha for r in toy})
    assert cli(*args)[0] == 0
    assert len(ResultStore(out).records()) == len(second)


def test_sharded_runs_merge_to_the_unsharded_run(tmp_path, cli):
    replay = write_replay(
        tmp_path / "mixed.jsonl",
        [{"task": "toy", "snippet": "scale", "completion": fenced("y = a * x")},
         {"task": "toy", "snippet": "norm", "completion": fenced("return 5.0")}],
    )  # fmt: skip
    common = [
        "--tasks-dir",
        FIXTURE_TASKS,
        "--model",
        "reference",
        "--model",
        f"replay:{replay}",
        "--no-progress",
    ]
    assert cli("evaluate", *common, "--out", tmp_path / "whole")[0] == 0
    shards = []
    for i in range(1, 5):
        shard = tmp_path / f"shard{i}"
        assert cli("evaluate", *common, "--shard", f"{i}/4", "--out", shard)[0] == 0
        shards.append(shard)
    assert cli("merge", *shards, "--out", tmp_path / "merged")[0] == 0

    def comparable(out):
        return sorted(
            (
                r.task,
                r.snippet,
                r.model,
                r.sample,
                r.status,
                r.failure_class,
                r.prompt_sha,
                r.task_sha,
            )
            for r in ResultStore(out).records()
        )

    assert comparable(tmp_path / "merged") == comparable(tmp_path / "whole")
    json_a, json_b = tmp_path / "a.json", tmp_path / "b.json"
    assert cli("report", tmp_path / "merged", "--json", json_a, "--quiet")[0] == 0
    assert cli("report", tmp_path / "whole", "--json", json_b, "--quiet")[0] == 0
    a, b = json.loads(json_a.read_text()), json.loads(json_b.read_text())
    assert a["models"] == b["models"]


def test_harness_errors_are_retried_reported_apart_and_rerun(tmp_path, cli, monkeypatch):
    """An infrastructure failure (the sandbox dies under a snippet's run) is retried; when
    it persists the record is harness_error, counted apart and never against the model,
    and the next run tries it again."""
    import rcb_action.runner._evaluate as evaluate_module

    real = evaluate_module.score_snippet
    calls: dict[str, int] = {}

    def flaky(sandbox, task, snippet, code, expected):
        calls[snippet] = calls.get(snippet, 0) + 1
        if snippet == "norm" or (snippet == "shift" and calls[snippet] == 1):
            raise ConnectionError("the sandbox went away")
        return real(sandbox, task, snippet, code, expected)

    monkeypatch.setattr(evaluate_module, "score_snippet", flaky)
    out = tmp_path / "out"
    args = ["evaluate", "--model", "reference", "--tasks-dir", FIXTURE_TASKS, "--tasks", "toy"]
    code, _, _ = cli(*args, "--out", out, "--no-progress")
    assert code == 0
    records = {r.snippet: r for r in ResultStore(out).records()}
    assert calls["norm"] == 1 + evaluate_module.HARNESS_RETRIES
    assert records["norm"].status == "harness_error"
    assert "ConnectionError: the sandbox went away" in records["norm"].message
    assert calls["shift"] == 2 and records["shift"].status == "pass"  # one retry was enough

    code, _, _ = cli("report", out, "--json", tmp_path / "report.json", "--quiet")
    entry = json.loads((tmp_path / "report.json").read_text())["models"]["reference"]
    assert entry["harness_errors"] == 1
    assert entry["scaled_pass_at_1"] == 100.0 and entry["pass_rate"] == 100.0
    assert entry["snippets"] == len(records) - 1

    monkeypatch.setattr(evaluate_module, "score_snippet", real)
    calls.clear()
    code, _, err = cli(*args, "--out", out, "--no-progress")
    assert code == 0 and "1 attempts to run" in err
    latest = ResultStore(out).latest()
    assert {r.snippet: r.status for r in latest.values()}["norm"] == "pass"


def test_an_environment_that_cannot_be_built_skips_its_paper_only(tmp_path, cli):
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASKS / "_envs", tasks / "_envs")
    shutil.copytree(FIXTURE_TASKS / "toy", tasks / "toy")
    shutil.copytree(FIXTURE_TASKS / "toy", tasks / "broken")
    (tasks / "_envs" / "nowhere").mkdir()
    # A pinned index name no index has: the build fails at download, as a missing wheel does.
    (tasks / "_envs" / "nowhere" / "requirements.txt").write_text("rcb-no-such-package==1.0.0\n")
    yaml_path = tasks / "broken" / "task.yaml"
    text = (
        yaml_path.read_text().replace("id: toy", "id: broken").replace("env: numpy", "env: nowhere")
    )
    yaml_path.write_text(text)
    out = tmp_path / "out"
    code, stdout, err = cli(
        "evaluate", "--model", "reference", "--tasks-dir", tasks, "--out", out,
        "--no-progress", "--workers", "2",
    )  # fmt: skip
    assert code == 0, err
    records = ResultStore(out).records()
    by_task = {t: [r for r in records if r.task == t] for t in ("toy", "broken")}
    assert len(by_task["toy"]) == 5 and all(r.status == "pass" for r in by_task["toy"])
    assert len(by_task["broken"]) == 5 and all(r.status == "skipped" for r in by_task["broken"])
    assert "task broken: its environment could not be built" in by_task["broken"][0].message
    assert "1 paper(s) skipped" in err and "broken (" in err
    assert "not run" in stdout and "task broken" in stdout  # the report names the skip
