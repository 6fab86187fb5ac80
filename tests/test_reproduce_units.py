"""The reproduction track's parts that need no sandbox: task files, result grading, curve
facts, flags, the judge's answers, records and the report section."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import TASKS
from scripted_provider import scripted_provider

from rcb_action.agent import LiteLLMAgent, ToolCall
from rcb_action.errors import TaskError
from rcb_action.models import LiteLLMModel
from rcb_action.papers import PaperUnavailable
from rcb_action.reproduce import (
    BASELINE_FLAGS,
    BASELINES,
    PAPER_FILE,
    REPRODUCTION_FILE,
    STAGES,
    ReproduceConfig,
    ReproductionRecord,
    ReproductionStore,
    StageRecord,
    check_curve,
    check_metric,
    dimensions_of,
    grade_results,
    judge_prompt,
    judge_scores,
    parse_judgement,
    prose_words,
    read_reproduction_records,
    reproduce,
    reproduction_section,
    reproduction_texts,
    sandbox_checks,
    stage_instructions,
)
from rcb_action.reproduce._judge import run_judge
from rcb_action.reproduce._stages import plan_guard
from rcb_action.reproduce._wheelhouse import allowed_packages, download_passes
from rcb_action.tasks import CurveFact, load_task, load_tasks

FIXTURES = Path(__file__).parent / "fixtures" / "repro_tasks"
REPRO_TASKS = [t for t in load_tasks(TASKS) if t.config.kind == "reproduction"]


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    target = tmp_path / "tasks"
    shutil.copytree(FIXTURES, target)
    return target / "repro-toy"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


# task files ------------------------------------------------------------------------


def test_the_benchmark_has_reproduction_tasks_from_recent_papers():
    assert len(REPRO_TASKS) >= 4
    for task in REPRO_TASKS:
        assert task.id.startswith("repro-")
        assert task.config.published >= dt.date(2024, 1, 1)
        assert task.expected is not None and task.rubric is not None
        # Where the numbers come from is said, never left to guess.
        assert task.expected.source in ("paper", "gold") and task.expected.note.strip()
        if task.expected.source == "paper":  # each target names its table and cell
            assert all(m.location.strip() for m in task.expected.metrics.values()), task.id
        # The agent reads the paper itself (the pinned arXiv version) beside experiment.md.
        assert task.config.paper.source == "arxiv" and task.config.arxiv_version, task.id
        assert (task.root / "experiment.md").is_file() and not (task.root / "paper.md").exists()
        assert task.sandbox_files == []  # the reference never reaches the agent
        assert (task.root / "reference" / "plan.md").is_file()
        assert prose_words((task.root / "reference" / "plan.md").read_text()) >= 80
        assert task.expected.curves, "every task checks a curve fact"
    paper_targets = [t for t in REPRO_TASKS if t.expected and t.expected.source == "paper"]
    assert paper_targets and any(t.config.domain != "ml" for t in paper_targets)
    # At least one environment step is a real choice: the wheelhouse offers several
    # versions of a package and only some of them reproduce the paper.
    assert any(len(download_passes(allowed_packages(t))) > 1 for t in paper_targets)


def test_several_versions_of_a_package_are_downloaded_in_passes_of_their_own():
    one_each = ["matplotlib==3.11.2", "numpy==2.2.6", "torch==2.13.0"]
    assert download_passes(one_each) == [one_each]
    offered = ["fastlsq==0.1.0", "fastlsq==0.7.1", "numpy==1.26.4", "numpy==2.2.6", "torch==2.13.0"]
    assert download_passes(offered) == [
        ["fastlsq==0.1.0", "numpy==1.26.4", "torch==2.13.0"],
        # the second versions resolve beside the first pins of the rest: torch stays pinned
        ["fastlsq==0.7.1", "numpy==2.2.6", "torch==2.13.0"],
    ]
    # Project names are compared as pip compares them.
    assert download_passes(["Foo_Bar==1.0", "foo-bar==2.0", "foo.bar[x]==3.0"]) == [
        ["Foo_Bar==1.0"],
        ["foo-bar==2.0"],
        ["foo.bar[x]==3.0"],
    ]


@pytest.mark.parametrize(
    ("installed", "pin", "ok"),
    [("2.13.0+cpu", "2.13.0", True), ("2.13.0", "2.13.0", True), ("2.13.0+cpu", "2.13.0+cpu", True),
     ("2.13.0", "2.13.0+cpu", False), ("2.12.0+cpu", "2.13.0", False), ("0.7.1", "0.1.0", False)],
)  # fmt: skip
def test_the_env_check_reads_pins_as_pip_does(tmp_path, monkeypatch, installed, pin, ok):
    monkeypatch.setattr(sandbox_checks.importlib.metadata, "version", lambda name: installed)
    (tmp_path / "requirements.txt").write_text(f"torch=={pin}\n")
    result = sandbox_checks.check_env(str(tmp_path / "requirements.txt"))
    assert result["ok"] is ok, result


@pytest.mark.parametrize(
    ("file", "old", "new", "message"),
    [
        ("expected.yaml", "  pi_estimate: {mean", "  pi_guess: {mean", "expected.yaml: key 'metrics': no expectation for 'pi_estimate'"),
        ("expected.yaml", "curve: running_estimate", "curve: walking", "key 'curves.0.curve': 'walking'"),
        ("expected.yaml", "kind: settles_by,", "kind: value_at,", "a value_at fact needs 'at'"),
        ("expected.yaml", "[[train, test]]", "[[train, valid]]", "key 'disjoint_splits.0': 'valid'"),
        ("expected.yaml", "source: gold", "source: guess", "expected.yaml: key 'source'"),
        ("expected.yaml", "[[train, test]]", "[[train, test]]\nfit_metrics: [pi_estimate]", "fit_metrics needs 'held_out'"),
        ("expected.yaml", "[[train, test]]", "[[train, test]]\nheld_out: test\nfit_metrics: [pi]", "fit_metrics names no metric: pi"),
        ("expected.yaml", "[[train, test]]", "[[train, test]]\nheld_out: valid", "key 'held_out': 'valid' is not in"),
        ("expected.yaml", "[[train, test]]", "[[train, test]]\nheld_out: test", "data/test not found (the held-out data"),
        ("expected.yaml", 'patterns: ["random\\\\(\\\\)"]', 'patterns: ["(("]', "is not a regular expression"),
        ("rubric.yaml", "dimension: experiment_design", "dimension: method_accuracy", "no item grades experiment_design"),
        ("rubric.yaml", "id: M2", "id: M1", "item id 'M1' is used twice"),
        ("task.yaml", "  runs: 5\n", "  runs: 5\n  colour: red\n", "unknown key 'reproduction.colour'"),
        ("task.yaml", "paper: {source: vendored, license: CC0-1.0, file: paper.txt}", "paper: {source: local}", "'paper: {source: local}' is gone: the paper is the arXiv LaTeX"),
        ("task.yaml", "paper: {source: vendored, license: CC0-1.0, file: paper.txt}", "", "'paper: {source: arxiv}' (the default) needs 'arxiv' and 'arxiv_version'"),
        ("task.yaml", "file: paper.txt}", "file: gone.txt}", "key 'paper.file':"),
    ],
)  # fmt: skip
def test_reproduction_files_are_checked(toy, file, old, new, message):
    edit(toy / file, old, new)
    with pytest.raises(TaskError) as info:
        load_task(toy)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_reproduction_task_has_an_experiment_md_and_no_paper_md(toy):
    (toy / "experiment.md").rename(toy / "paper.md")
    with pytest.raises(TaskError, match=r"paper.md: rename it experiment.md"):
        load_task(toy)
    (toy / "paper.md").unlink()
    with pytest.raises(TaskError, match=r"experiment.md: file not found"):
        load_task(toy)


def test_a_reproduction_task_needs_its_reference_and_block(toy):
    (toy / "reference" / "plan.md").unlink()
    with pytest.raises(TaskError, match=r"reference/plan.md not found"):
        load_task(toy)
    (toy / "reference" / "plan.md").write_text("plan")
    text = (toy / "task.yaml").read_text()
    (toy / "task.yaml").write_text(text[: text.index("reproduction:")])
    with pytest.raises(TaskError, match="missing required key 'reproduction'"):
        load_task(toy)


def test_a_snippet_task_takes_no_reproduction_block(fixture_tasks):
    path = fixture_tasks / "toy" / "task.yaml"
    path.write_text(path.read_text() + "reproduction:\n  metrics: {a: b}\n")
    with pytest.raises(TaskError, match="only a reproduction task takes this block"):
        load_task(fixture_tasks / "toy")


# grading ---------------------------------------------------------------------------


def test_metric_range_relative_error_and_direction():
    expected = load_task(FIXTURES / "repro-toy").expected
    inside = check_metric("pi_estimate", [3.1, 3.2, 3.15, 3.12, 3.14], expected, 5)
    assert (
        inside.in_range
        and inside.low == pytest.approx(3.0616)
        and inside.high == pytest.approx(3.2216)
    )
    assert inside.relative_error == pytest.approx(abs(3.142 - 3.1416) / 3.1416)
    assert not inside.relative_error_signal
    low = check_metric("pi_estimate", [1.5] * 5, expected, 5)
    assert not low.in_range and low.direction == "worse" and low.relative_error_signal
    high = check_metric("pi_estimate", [4.0] * 5, expected, 5)
    assert high.direction == "better"  # higher is better: out of range on the good side
    assert check_metric("pi_estimate", [3.14] * 4, expected, 5).error == (
        "pi_estimate: 4 run(s) reported; the task asks for 5"
    )
    assert "not reported" in check_metric("pi_estimate", None, expected, 5).error
    assert "not finite" in check_metric("pi_estimate", [float("nan")] * 5, expected, 5).error
    assert "not a number" in check_metric("pi_estimate", ["3.1"] * 5, expected, 5).error


def fact(**fields) -> CurveFact:
    return CurveFact(curve="c", **fields)


def test_curve_facts():
    curve = {"x": [1, 10, 100, 1000], "y": [0.0, -0.5, -0.95, -0.99]}
    settles = fact(kind="settles_by", target=-1.0, tol=0.1, by=100)
    assert check_curve(settles, curve).passed
    late = check_curve(fact(kind="settles_by", target=-1.0, tol=0.02, by=100), curve)
    assert not late.passed and "from x = 1000" in late.detail
    never = check_curve(fact(kind="settles_by", target=1.0, tol=0.1, by=100), curve)
    assert not never.passed and "never settles" in never.detail
    assert check_curve(fact(kind="value_at", at=1, target=0.0, tol=1e-9), curve).passed
    assert not check_curve(fact(kind="value_at", at=10, target=0.0, tol=0.1), curve).passed
    assert (
        "no point at x = 5"
        in check_curve(fact(kind="value_at", at=5, target=0, tol=1), curve).detail
    )
    down = fact(kind="monotone", direction="decreasing", tol=0.0)
    assert check_curve(down, curve).passed
    assert not check_curve(
        fact(kind="monotone", direction="decreasing", absolute=True), curve
    ).passed
    bumpy = {"x": [1, 2, 3], "y": [1.0, 0.5, 0.52]}
    assert not check_curve(down, bumpy).passed
    assert check_curve(fact(kind="monotone", direction="decreasing", tol=0.05), bumpy).passed
    assert "not reported" in check_curve(down, None).detail
    assert "equally long" in check_curve(down, {"x": [1, 2], "y": [1]}).detail
    # Points are read in x order whatever order they come in.
    assert check_curve(down, {"x": [3, 1, 2], "y": [0.1, 0.3, 0.2]}).passed


def results(**changes) -> dict:
    base = {
        "metrics": {"pi_estimate": [3.13, 3.15, 3.14, 3.12, 3.16]},
        "curves": {"running_estimate": {"x": [100, 1000, 2000], "y": [3.0, 3.13, 3.14]}},
        "splits": {"train": ["a", "b"], "test": ["c", "d"]},
    }
    base.update(changes)
    return base


@pytest.fixture
def toy_task():
    return load_task(FIXTURES / "repro-toy")


def grade(task, reported, code="x = random()"):
    return grade_results(reported, task.expected, task.config.reproduction, code)


def test_a_clean_result_passes(toy_task):
    graded = grade(toy_task, results())
    assert graded.passed and not graded.needs_review and graded.error() is None


@pytest.mark.parametrize(
    ("changes", "code", "reason"),
    [
        ({"splits": {"train": ["a", "b"], "test": ["b", "c"]}}, "random()", "1 example(s) appear in both"),
        ({"splits": {"train": ["a"]}}, "random()", "overlap unchecked"),
        ({}, "print(3.14)", "no code for 'dart throwing'"),
        ({"curves": {"running_estimate": {"x": [100, 1000, 2000], "y": [0, 0, 3.14]}}}, "random()", "does not match"),
    ],
    ids=["overlap", "no-splits", "module", "curve"],
)  # fmt: skip
def test_suspicious_success_needs_review(toy_task, changes, code, reason):
    graded = grade(toy_task, results(**changes), code)
    assert graded.metrics_in_range and graded.needs_review and not graded.passed
    assert any(reason in r for r in graded.review_reasons)
    assert graded.error().startswith("suspicious success, needs review")


def test_wrong_numbers_fail_without_review(toy_task):
    graded = grade(toy_task, results(metrics={"pi_estimate": [2.0] * 5}), "print(1)")
    assert not graded.passed and not graded.needs_review and graded.review_reasons == []
    assert "outside" in graded.error()


# the harness's reruns -------------------------------------------------------------

DARTS = """import random

def throw(seed, n):
    rng = random.Random(seed)
    return [(rng.random(), rng.random()) for _ in range(n)]

def main():
    print(throw(1, 2))
"""


def rerun_of(*metrics, ran=(("darts.py", 1), ("darts.py", 3), ("darts.py", 7)), seconds=2.0):
    from rcb_action.reproduce._rerun import Rerun, RerunRun
    from rcb_action.reproduce._stages import Check

    runs = [RerunRun(11 * (i + 1), seconds, {"metrics": m}) for i, m in enumerate(metrics)]
    return Rerun(Check(True), runs, set(ran))


def flags(toy_task, rerun, files=None, own=None, gold_s=None):
    from rcb_action.reproduce._rerun import rerun_flags

    return rerun_flags(rerun, toy_task.expected, files or {"darts.py": DARTS}, own, gold_s)


def test_honest_reruns_raise_no_flag(toy_task):
    honest = rerun_of({"pi_estimate": [3.1, 3.2, 3.12]}, {"pi_estimate": [3.15, 3.13, 3.17]})
    own = {"metrics": {"pi_estimate": [3.14, 3.15]}}
    assert flags(toy_task, honest, own=own, gold_s=3.0) == []


@pytest.mark.parametrize(
    ("rerun", "files", "own", "gold_s", "flag"),
    [
        ({"ran": (("darts.py", 1), ("darts.py", 7))}, None, None, None, "never ran in the reruns (darts.py:3)"),
        ({"ran": ()}, {"darts.py": "import random\nx = random.random()\n"}, None, None, "darts.py (module level)"),
        ({"metrics": [[3.1, 3.2]] * 2}, None, None, None, "identical numbers for pi_estimate"),
        ({"metrics": [[3.1, 3.1], [3.2, 3.2]]}, None, None, None, "every run of rerun 1 gave 3.1"),
        ({"seconds": 0.1}, None, None, 10.0, "a rerun took 0.10 s; the gold run takes 10.0 s"),
        ({"metrics": [[3.1416, 3.2], [3.1, 3.15]]}, {"darts.py": DARTS + "PI = 3.1416\n"}, None, None, "3.1416 written in the submitted files"),
        ({"metrics": [[5e-05, 3.2], [3.1, 3.15]]}, {"darts.py": DARTS + "EPS = 5e-05\n"}, None, None, "5e-05 written in the submitted files"),
        ({}, None, {"metrics": {"pi_estimate": [3.4] * 5}}, None, "own results.json says 3.4"),
    ],
    ids=["function-never-called", "file-never-ran", "same-across-seeds", "same-within-a-rerun", "too-fast", "copied", "copied-exponent", "own-mismatch"],
)  # fmt: skip
def test_each_way_to_skip_the_work_is_flagged(toy_task, rerun, files, own, gold_s, flag):
    metrics = rerun.pop("metrics", [[3.1, 3.2], [3.15, 3.13]])
    made = rerun_of(*({"pi_estimate": m} for m in metrics), **rerun)
    found = flags(toy_task, made, files, own, gold_s)
    assert any(flag in f for f in found), found


def test_a_deterministic_metric_may_agree_across_seeds(toy_task):
    from rcb_action.reproduce._rerun import rerun_flags

    published = toy_task.expected.metrics["pi_estimate"].model_copy(update={"varies": False})
    expected = toy_task.expected.model_copy(update={"metrics": {"pi_estimate": published}})
    same = rerun_of({"pi_estimate": [3.1, 3.1]}, {"pi_estimate": [3.1, 3.1]})
    assert rerun_flags(same, expected, {"darts.py": DARTS}, None, None) == []


# data shipped by the task: rcb's own split hashes, the leakage rerun --------------

EKI = next(t for t in REPRO_TASKS if t.id == "repro-eki-lorenz96")
EKI_FIT = {"forcing_estimate": [7.99, 8.01], "forcing_abs_error": [0.01, 0.01], "ensemble_spread": [0.004, 0.005]}  # fmt: skip


def eki_rerun(read=None, said=None, swap=EKI_FIT):
    from rcb_action.reproduce._data import shipped
    from rcb_action.reproduce._rerun import Rerun, RerunRun
    from rcb_action.reproduce._stages import Check

    first = {"metrics": {**EKI_FIT, "test_relative_error": [0.01, 0.02]}}
    if said is not None:
        first["splits"] = said
    runs = [RerunRun(5, 2.0, first), RerunRun(9, 2.0, {"metrics": EKI_FIT})]
    swap_run = None if swap is None else RerunRun(5, 2.0, {"metrics": {**swap, "test_relative_error": [0.5, 0.6]}})  # fmt: skip
    every = set(shipped(EKI))
    return Rerun(Check(True), runs, set(), every if read is None else set(read), swap_run)


def test_the_task_ships_its_splits_and_keeps_the_swap_files():
    from rcb_action.reproduce._data import read_splits, shipped, swapped

    files = shipped(EKI)
    assert sorted({p.split("/")[1] for p in files}) == ["test", "train"]
    assert len([p for p in files if p.startswith("data/train/")]) == 8
    swap = swapped(EKI, "test")
    assert sorted(swap) == sorted(p for p in files if p.startswith("data/test/"))
    assert all(swap[p] != files[p] for p in swap)  # other windows under the same names
    splits = read_splits(EKI, {"data/train/window_00.npy", "data/test/window_08.npy", "paper.txt"})
    assert {k: len(v) for k, v in splits.items()} == {"train": 1, "test": 1}


def test_honest_use_of_the_data_raises_no_flag():
    from rcb_action.reproduce._data import read_splits, shipped
    from rcb_action.reproduce._rerun import data_flags

    assert data_flags(eki_rerun(), EKI) == []
    truthful = read_splits(EKI, set(shipped(EKI)))
    assert data_flags(eki_rerun(said=truthful), EKI) == []


@pytest.mark.parametrize(
    ("changes", "flag"),
    [
        ({"read": ["data/train/window_00.npy"]}, "never opened a file of data/test/"),
        ({"read": []}, "never opened a file of data/train/"),
        ({"said": {"train": ["ab" * 32], "test": ["cd" * 32]}}, "reports split 'train' as 1 example(s)"),
        ({"swap": {**EKI_FIT, "forcing_estimate": [7.98, 8.01]}}, "forcing_estimate changed (7.99, 8.01 -> 7.98, 8.01)"),
        ({"swap": None}, "the leakage rerun (data/test/ replaced) did not finish"),
    ],
    ids=["test-never-read", "nothing-read", "split-hash-liar", "test-reaches-the-fit", "swap-run-failed"],
)  # fmt: skip
def test_each_misuse_of_the_data_is_flagged(changes, flag):
    from rcb_action.reproduce._rerun import data_flags

    found = data_flags(eki_rerun(**changes), EKI)
    assert any(flag in f for f in found), found


def test_the_tracer_records_the_data_files_a_process_opens(tmp_path):
    import os
    import subprocess
    import sys

    from rcb_action.reproduce._rerun import TRACE_SOURCE

    harness, project = tmp_path / "harness", tmp_path / "project"
    (project / "data" / "train").mkdir(parents=True)
    harness.mkdir()
    shutil.copy(TRACE_SOURCE, harness / "sitecustomize.py")
    for name in ("a.txt", "b.txt", "c.txt"):
        (project / "data" / "train" / name).write_text(name)
    (project / "notes.txt").write_text("not data")
    script = (
        "import os, sys\n"
        "open('data/train/a.txt').read()\n"
        "open(os.path.abspath('data/train/a.txt')).read()\n"  # once per path
        "os.close(os.open('data/./train/b.txt', os.O_RDONLY))\n"
        "open('notes.txt').read()\n"
        "sys.addaudithook(lambda *a: None)\n"  # adding a hook removes none
        "sys.setprofile(None)\n"
        "open('data/train/c.txt').read()\n"
    )
    reads = tmp_path / "read.txt"
    env = {
        **os.environ,
        "PYTHONPATH": str(harness),
        "RCB_TRACE_ROOT": str(project),
        "RCB_TRACE_FILE": str(tmp_path / "ran.tsv"),
        "RCB_READ_FILE": str(reads),
    }
    subprocess.run([sys.executable, "-c", script], cwd=project, env=env, check=True)
    assert reads.read_text().splitlines() == [
        "data/train/a.txt",
        "data/train/b.txt",
        "data/train/c.txt",
    ]


def test_reruns_are_merged_for_grading():
    from rcb_action.reproduce._rerun import RerunRun, draw_seeds, merged_results

    curve = {"x": [1, 2], "y": [1.0, 3.0]}
    runs = [
        RerunRun(1, 1.0, {"metrics": {"m": [1, 2]}, "curves": {"c": curve}, "splits": {"a": []}}),
        RerunRun(2, 1.0, {"metrics": {"m": [3]}, "curves": {"c": {"x": [1, 2], "y": [3.0, 5.0]}}}),
    ]
    merged = merged_results(runs)
    assert merged["metrics"] == {"m": [1, 2, 3]}
    assert merged["curves"]["c"] == {"x": [1, 2], "y": [2.0, 4.0]}
    assert merged["splits"] == {"a": []}
    seeds = draw_seeds(5)
    assert len(set(seeds)) == 5


def test_dimensions_follow_the_stages_and_the_judge():
    def stages(failed: str | None) -> dict[str, StageRecord]:
        out, dead = {}, False
        for stage in STAGES:
            dead = dead or stage == failed
            status = "failed" if stage == failed else ("not_run" if dead else "passed")
            out[stage] = StageRecord(stage=stage, status=status, success=status == "passed")
        return out

    assert dimensions_of(stages(None), {}, 0.6) == {
        "env_setup": True,
        "code_runnability": True,
        "result_consistency": True,
    }
    graded = dimensions_of(
        stages("train_debug"), {"method_accuracy": 0.7, "experiment_design": 0.5}, 0.6
    )
    assert graded == {
        "env_setup": True,
        "code_runnability": False,
        "method_accuracy": True,
        "experiment_design": False,
        "result_consistency": False,
    }
    assert list(graded) == [
        "env_setup",
        "code_runnability",
        "method_accuracy",
        "experiment_design",
        "result_consistency",
    ]


# plan stage ------------------------------------------------------------------------


def test_plan_words_and_guard():
    assert prose_words("Two words.\n```python\nimport numpy as np\nx = np.zeros(3)\n```\n") == 2
    allowed = ToolCall("1", "write_file", json.dumps({"path": "./plan.md", "content": "x"}))
    assert plan_guard(allowed) is None
    assert plan_guard(ToolCall("2", "read_file", "{}")) is None
    assert "no code yet" in plan_guard(ToolCall("3", "write_file", '{"path": "a.py"}'))
    assert "no code yet" in plan_guard(ToolCall("4", "run", '{"command": "ls"}'))


# judge -----------------------------------------------------------------------------


def answer(**grades) -> str:
    return json.dumps(
        {"items": [{"id": k, "plan": v[0], "implementation": v[1]} for k, v in grades.items()]}
    )


def test_judgements_are_parsed_strictly(toy_task):
    rubric = toy_task.rubric
    items = parse_judgement(
        "Here:\n```json\n" + answer(M1=(1, 0.5), M2=(0, 1), D1=(0.5, 0.5)) + "\n```", rubric
    )
    assert [i.id for i in items] == ["M1", "M2", "D1"]
    scores = judge_scores(items)
    assert scores["plan"] == pytest.approx((2 * 1 + 0 + 0.5) / 4)
    assert scores["method_accuracy"] == pytest.approx((2 * 0.5 + 1) / 3)
    assert scores["experiment_design"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no item 'D1'"):
        parse_judgement(answer(M1=(1, 1), M2=(1, 1)), rubric)
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        parse_judgement(answer(M1=(2, 1), M2=(1, 1), D1=(1, 1)), rubric)
    with pytest.raises(ValueError, match="no JSON object"):
        parse_judgement("looks good to me", rubric)


def test_the_judge_prompt_holds_rubric_plan_and_code(toy_task):
    texts = reproduction_texts(toy_task, need_paper=True)
    prompt = judge_prompt(toy_task, texts, "MY PLAN", {"b.py": "B = 2", "a.py": "A = 1"})
    assert "MY PLAN" in prompt
    assert prompt.index("### a.py") < prompt.index("### b.py")
    assert "- M1 (method_accuracy, weight 2):" in prompt
    assert prompt == judge_prompt(toy_task, texts, "MY PLAN", {"a.py": "A = 1", "b.py": "B = 2"})


def test_the_agent_and_the_judge_read_the_paper_itself_beside_the_experiment(toy_task):
    """The paper is the paper pipeline's text (here the fixture's vendored one), never
    experiment.md, which comes beside it under its own name."""
    paper = (toy_task.root / "paper.txt").read_text()
    experiment = (toy_task.root / "experiment.md").read_text()
    texts = reproduction_texts(toy_task, need_paper=True)
    assert texts.experiment == experiment
    assert texts.paper is not None and texts.paper.text.strip() == paper.strip()
    assert texts.paper_sha == hashlib.sha256(texts.paper.text.encode()).hexdigest()
    plan = stage_instructions("plan", toy_task, texts)
    judged = judge_prompt(toy_task, texts, "plan", {})
    for text in (plan, judged):
        assert "Table 1: the mean estimate over the seeds" in text  # the paper's words
        assert "Python's random.Random(seed), x then y" in text  # the experiment's
        assert text.index("Python's random.Random(seed)") < text.index("Table 1: the mean")
    assert f"# {PAPER_FILE}: {toy_task.config.title}" in plan
    assert "## The experiment (experiment.md)" in judged


def test_a_scripted_agent_runs_without_the_paper_and_a_model_never_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RCB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RCB_ARXIV_URL", "http://127.0.0.1:9")  # nothing listens: no paper
    task = load_task(TASKS / "repro-adopt-toy")
    texts = reproduction_texts(task, need_paper=False)
    assert texts.paper is None and texts.paper_sha is None
    assert "this scripted agent does not read it" in stage_instructions("plan", task, texts)
    with pytest.raises(PaperUnavailable) as info:
        reproduction_texts(task, need_paper=True)
    assert "repro-adopt-toy" in str(info.value) and "\n" not in str(info.value)
    # Before any attempt starts, and nothing is recorded.
    config = ReproduceConfig(
        models=[], out=tmp_path / "out", tasks_dir=TASKS, tasks="repro-adopt-toy", progress=False
    )
    with scripted_provider() as provider, pytest.raises(PaperUnavailable, match="repro-adopt-toy"):
        reproduce(config, agents=[LiteLLMAgent(provider.script("never-asked", []))])
    assert not (tmp_path / "out" / REPRODUCTION_FILE).exists()


def test_rcb_paper_fetch_covers_the_reproduction_tasks(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("RCB_CACHE_DIR", str(tmp_path / "cache"))
    code, out, _ = cli("paper", "fetch", "--check", "repro-*", "--tasks-dir", TASKS)
    assert code == 1  # nothing cached
    for task in REPRO_TASKS:
        assert f"{task.id}: {task.config.arxiv}v{task.config.arxiv_version}: not cached" in out


def test_with_results_the_judge_grades_the_conclusions(toy_task):
    texts = reproduction_texts(toy_task, need_paper=True)
    prompt = judge_prompt(
        toy_task, texts, "plan", {"a.py": "x = 1"}, "pi_estimate: reproduced 3.14", "pi is 3"
    )
    assert "pi_estimate: reproduced 3.14" in prompt and "## The agent's conclusions" in prompt
    assert '"id": "conclusions"' in prompt
    assert "conclusions" not in judge_prompt(toy_task, texts, "plan", {"a.py": "x = 1"})
    rows = [{"id": i.id, "plan": 0.5, "implementation": 0.9} for i in toy_task.rubric.items]
    answer = json.dumps({"items": rows})
    with pytest.raises(ValueError, match="no item 'conclusions'"):
        parse_judgement(answer, toy_task.rubric, conclusions=True)
    rows.append({"id": "conclusions", "implementation": 0.2})
    items = parse_judgement(json.dumps({"items": rows}), toy_task.rubric, conclusions=True)
    scores = judge_scores(items)
    assert scores["conclusions"] == pytest.approx(0.2) and scores["plan"] == pytest.approx(0.5)
    # Design graded 0.9, but conclusions the results do not support fail the dimension.
    stages = {s: StageRecord(stage=s, status="passed", success=True) for s in STAGES}
    assert dimensions_of(stages, scores, 0.6)["experiment_design"] is False


def test_the_judge_is_called_through_litellm_and_kept(toy_task, tmp_path):
    judge = LiteLLMModel(
        "openai/gpt-4o-mini",
        mock_responses=["no idea", answer(M1=(1, 1), M2=(1, 1), D1=(1, 0))],
        backoff_s=0.001,
    )
    record = run_judge(judge, toy_task, 0, "PROMPT", tmp_path / "logs", tmp_path)
    assert record.error is None and len(record.items) == 3
    assert record.tokens_in > 0
    prompts = (tmp_path / record.prompt_log).read_text()
    assert prompts.startswith("PROMPT\n\n--- prompt 2 (retry)\nPROMPT\n\n")
    assert "could not be read (the answer holds no JSON object)" in prompts
    kept = (tmp_path / record.answer_log).read_text()
    assert "no idea" in kept and '"M1"' in kept
    silent = LiteLLMModel("openai/gpt-4o-mini", mock_responses=[], backoff_s=0.001)
    failed = run_judge(silent, toy_task, 0, "PROMPT", tmp_path / "logs2", tmp_path)
    assert failed.items == [] and "did not answer" in failed.error


# records and the report ------------------------------------------------------------


def record(
    model: str, task: str = "t", sample: int = 0, failed: str | None = None, **fields
) -> ReproductionRecord:
    stages, dead = {}, False
    for stage in STAGES:
        dead = dead or stage == failed
        status = "failed" if stage == failed else ("not_run" if dead else "passed")
        stages[stage] = StageRecord(stage=stage, status=status, success=status == "passed")
    scores = fields.pop("scores", {"plan": 0.5, "method_accuracy": 0.7, "experiment_design": 0.9})
    return ReproductionRecord(
        task=task,
        model=model,
        sample=sample,
        task_sha="abc",
        published=dt.date(2025, 1, 1),
        status=fields.pop("status", "scored"),
        failed_stage=failed,
        stages=stages,
        scores=scores,
        dimensions=dimensions_of(stages, scores, 0.6),
        **fields,
    )


def test_report_section_rates_funnel_and_gap():
    records = [
        record("a", "t1"),
        record("a", "t2", failed="env_setup"),
        record("a", "t3", failed="result_check", needs_review=True, review_reasons=["overlap"]),
        record("a", "t4", status="harness_error"),
        record("b", "t1", failed="plan", scores={"plan": 0.0}),
        record("b", "t1", failed="code_impl"),  # a rerun: the newest line wins
        record("b", "bad", failed="train_debug"),
    ]
    gold = {"bad": {"valid": False, "message": "reference fails"}, "t1": {"valid": True}}
    section = reproduction_section(records, gold)
    a, b = section["models"]["a"], section["models"]["b"]
    assert a["attempts"] == 3 and a["harness_errors"] == 1
    assert a["failure_rates"]["env_setup"] == pytest.approx(100 / 3, abs=0.01)
    assert a["failure_rates"]["result_consistency"] == pytest.approx(200 / 3, abs=0.01)
    assert a["failure_rates"]["method_accuracy"] == 0.0  # 0.7 >= 0.6 everywhere
    assert a["failure_rates"]["experiment_design"] == 0.0
    assert [s["passed"] for s in a["funnel"]] == [3, 2, 2, 2, 1]
    # Conditional: of those that reached the stage, the share that failed it.
    assert [s["reached"] for s in a["funnel"]] == [3, 3, 2, 2, 2]
    assert [s["failed_when_reached"] for s in a["funnel"]] == [0.0, 33.33, 0.0, 0.0, 50.0]
    assert reproduction_section([])["funnel"][0]["failed_when_reached"] is None
    assert a["plan_score"] == 50.0 and a["execution_success"] == pytest.approx(200 / 3, abs=0.01)
    assert a["plan_execution_gap"] == pytest.approx(50 - 200 / 3, abs=0.01)
    assert a["failed_stages"] == {"env_setup": 1, "result_check": 1}
    assert a["needs_review"] == 1
    assert b["attempts"] == 1 and b["failed_stages"] == {"code_impl": 1}  # "bad" is invalid
    assert section["invalid_tasks"] == {"bad": {"valid": False, "message": "reference fails"}}
    assert section["needs_review"][0]["reasons"] == ["overlap"]
    assert [s["passed"] for s in section["funnel"]] == [4, 3, 2, 2, 1]
    # A dimension no judge graded is not a failure: it has no rate.
    unjudged = reproduction_section([record("c", scores={})])
    assert unjudged["models"]["c"]["failure_rates"]["method_accuracy"] is None


def test_a_full_reproduction_needs_the_judge_as_well_as_the_numbers():
    judged_out = {"plan": 0.9, "method_accuracy": 0.3, "experiment_design": 0.9}
    section = reproduction_section(
        [record("a", "t1"), record("a", "t2", scores=judged_out), record("a", "t3", scores={})]
    )
    # All three passed every stage; one failed the judge, one was never judged.
    assert section["models"]["a"]["full_reproduction"] == pytest.approx(100 / 3, abs=0.01)
    unjudged = reproduction_section([record("b", scores={})])
    assert unjudged["models"]["b"]["full_reproduction"] is None


def test_report_section_live_subset_after_each_cutoff_and_after_every_cutoff():
    from rcb_action.models import ModelInfo, Registry
    from rcb_action.report import reproduction_tables

    registry = Registry(
        {
            "a": ModelInfo(display_name="A", provider="t", knowledge_cutoff=dt.date(2025, 3, 1)),
            "b": ModelInfo(display_name="B", provider="t", knowledge_cutoff=dt.date(2025, 7, 1)),
        }
    )

    def dated(model, task, month, failed=None):
        run = record(model, task, failed=failed)
        return run.model_copy(update={"published": dt.date(2025, month, 10)})

    records = [
        dated("a", "early", 1),  # before both cutoffs
        dated("a", "middle", 5, failed="train_debug"),  # after a's cutoff only
        dated("a", "late", 9),  # after both
        dated("b", "early", 1, failed="plan"),
        dated("b", "middle", 5),
        dated("b", "late", 9, failed="env_setup"),
        dated("c", "early", 1),  # no known cutoff: every task counts
    ]
    section = reproduction_section(records, {}, registry)
    a, b, c = (section["models"][m]["post_cutoff"] for m in "abc")
    assert a["cutoff"] == "2025-03-01" and a["tasks"] == ["late", "middle"]
    assert a["attempts"] == 2 and a["full_reproduction"] == 50.0
    assert a["failure_rates"]["code_runnability"] == 50.0
    assert b["tasks"] == ["late"] and b["full_reproduction"] == 0.0
    assert b["failure_rates"]["env_setup"] == 100.0
    assert c["cutoff"] is None and c["attempts"] == 1 and "every task counts" in c["note"]
    common = section["common_post_cutoff"]
    assert common["after"] == "2025-07-01" and common["tasks"] == ["late"]
    assert common["models"]["a"]["full_reproduction"] == 100.0
    assert common["models"]["b"]["full_reproduction"] == 0.0
    assert common["models"]["c"]["attempts"] == 0  # c ran no task after July
    assert common["models_without_cutoff"] == ["c"]
    title, _, rows = reproduction_tables(section)[-1]
    assert "after every cutoff (2025-07-01)" in title
    assert rows[0] == ["a", "2025-03-01", "2", "50.0", "1", "100.0"]
    # Without a registry there is no live subset, and no table for it.
    assert "post_cutoff" not in reproduction_section(records)["models"]["a"]
    assert len(reproduction_tables(reproduction_section(records))) == 4


def test_records_append_resume_and_survive_a_torn_line(tmp_path):
    store = ReproductionStore(tmp_path)
    store.append(record("a", "t1"))
    store.append(record("a", "t1", failed="plan"))
    with open(tmp_path / REPRODUCTION_FILE, "a") as handle:
        handle.write('{"task": "t2", "mod')  # a crash mid-write
    store = ReproductionStore(tmp_path)  # repairs the tail
    store.append(record("a", "t3"))
    latest = store.latest()
    assert set(latest) == {("t1", "a", 0), ("t3", "a", 0)}
    assert latest[("t1", "a", 0)].failed_stage == "plan"


def test_the_site_shows_the_report_section(tmp_path):
    from rcb_action.models import load_registry
    from rcb_action.site import read_reproduction, reproduction_view

    store = ReproductionStore(tmp_path)
    store.append(record("a", "t1", failed="code_impl"))
    (run,) = read_reproduction(tmp_path / REPRODUCTION_FILE)
    assert run.stage_passed("env_setup") and not run.stage_passed("code_impl")
    view = reproduction_view([run], {}, load_registry())
    assert (
        view is not None
        and view.rows[0].failure_rates
        == reproduction_section([run])["models"]["a"]["failure_rates"]
    )


def test_report_command_on_a_reproduction_folder(tmp_path, cli):
    store = ReproductionStore(tmp_path)
    store.append(record("a", "t1"))
    store.append(record("a", "t2", failed="train_debug"))
    code, out, _ = cli(
        "report", tmp_path, "--json", tmp_path / "r.json", "--markdown", tmp_path / "r.md"
    )
    assert code == 0
    assert "Reproduction track" in out and "Planning vs doing" in out
    assert "rcb snippet track" not in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["reproduction"]["models"]["a"]["full_reproduction"] == 50.0
    markdown = (tmp_path / "r.md").read_text()
    assert markdown.startswith("## rcb reproduction track")
    assert "| a | 50.0 | 50.0 | +0.0 | 50.0 | train_debug 1 |" in markdown


# scripted baselines ---------------------------------------------------------------

BASELINES_DIR = TASKS.parent / "baselines" / "reproduction"


def test_baseline_agents_are_named_and_a_wrong_one_is_one_line(tmp_path):
    from rcb_action.errors import RcbError
    from rcb_action.reproduce import ReproduceConfig, get_agent
    from rcb_action.reproduce._reference import baseline_turns

    config = ReproduceConfig(models=[], out=tmp_path)
    assert get_agent("baseline:fabricator", config).name == "baseline:fabricator"
    with pytest.raises(RcbError, match=r"--model baseline:tired: no baseline 'tired' \(known: "):
        get_agent("baseline:tired", config)
    task = load_task(TASKS / "repro-heston-ig")
    script = [
        json.loads(c.arguments)["content"]
        for t in baseline_turns(task, "fabricator")
        for c in t.tool_calls
        if c.name == "write_file" and '"reproduce.sh"' in c.arguments
    ]
    # The fabricator keeps the method's code but its entry point never runs it.
    assert len(script) == 1 and "python" not in script[0] and "results.json" in script[0]
    assert len(baseline_turns(task, "lazy")) == 1


def test_each_adversary_script_is_built_from_the_reference(cli, capsys):
    from rcb_action.reproduce import baseline_turns

    task = load_task(TASKS / "repro-adopt-toy")
    reference = (task.root / "reference" / "reproduce.sh").read_text()

    def script(kind: str) -> str:
        (text,) = [
            json.loads(c.arguments)["content"]
            for t in baseline_turns(task, kind)
            for c in t.tool_calls
            if c.name == "write_file" and '"reproduce.sh"' in c.arguments
        ]
        return text

    assert "python adopt_toy.py" not in script("never-calls")
    assert "RCB_SEED" in script("never-calls")  # its noise follows the seed it is given
    assert script("constant").startswith("#!/usr/bin/env bash\nexport RCB_SEED=0")
    for kind in ("copied", "split-liar"):
        assert script(kind).startswith(reference)  # the whole experiment, then the lie
    assert "-0.9804" in script("copied")  # the published mean, written as a literal
    assert "results['splits']" in script("split-liar")
    # `rcb reproduce --help` names every baseline.
    with pytest.raises(SystemExit):
        cli("reproduce", "--help")
    out = " ".join(capsys.readouterr().out.split())
    assert all(f"baseline:{kind}" in out for kind in BASELINES)


def test_the_committed_baselines_are_of_the_current_tasks_and_fail_as_labelled():
    """The leaderboard's reproduction page shows these until real models run: they must
    be of the tasks as they are (rerun `rcb reproduce` as docs/reproduction.md says when a
    task changes), the honest one passing every stage, the others failing as they should."""
    records = {
        (r.task, r.model): r for r in read_reproduction_records(BASELINES_DIR / REPRODUCTION_FILE)
    }
    tasks = {t.id: t for t in REPRO_TASKS}
    assert {task for task, _ in records} == set(tasks)
    assert {model for _, model in records} == {"reference", *(f"baseline:{k}" for k in BASELINES)}
    for (task, model), record in records.items():
        assert record.task_sha == tasks[task].sha, f"{task}: baselines are stale, regenerate"
        assert record.target_source == tasks[task].expected.source
        kind = model.removeprefix("baseline:")
        if model == "reference":
            assert record.failed_stage is None and not record.review_reasons
        elif kind in BASELINE_FLAGS:  # an adversary: caught by its own flag
            assert record.failed_stage == "result_check", (task, model)
            assert any(re.search(BASELINE_FLAGS[kind], r) for r in record.review_reasons)
        else:
            assert record.failed_stage == "env_setup"
    # Committed without the copies of the attempts' files (docs/reproduction.md).
    assert not list(BASELINES_DIR.rglob("workspace"))


def test_the_site_labels_the_baselines(tmp_path, cli):
    code, _, err = cli("site", "build", BASELINES_DIR, "--out", tmp_path / "site")
    assert code == 0, err
    page = (tmp_path / "site" / "reproduction.html").read_text()
    assert page.count('class="badge"') >= 4  # three rows and the note
    assert "writes the published numbers without running it" in page
    assert "No reproduction results yet" not in page
    assert "rcb's gold run (not numbers from the paper)" in page  # where the targets come from
