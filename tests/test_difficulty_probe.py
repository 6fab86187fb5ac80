"""bench/difficulty.py: the stratified difficulty probe, from the draw to the estimate."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from conftest import FIXTURE_TASKS, ROOT, fenced

from rcb_action.tasks import load_task

spec = importlib.util.spec_from_file_location("difficulty", ROOT / "bench" / "difficulty.py")
assert spec and spec.loader
difficulty = importlib.util.module_from_spec(spec)
sys.modules["difficulty"] = difficulty
spec.loader.exec_module(difficulty)


def test_the_census_counts_as_it_is_and_the_drawn_papers_stand_for_their_stratum():
    verdicts = [
        ("census", "a", 10, True),
        ("census", "b", 6, False),
        ("sampled", "a", 2, True),
        ("sampled", "b", 4, False),
    ]
    result = difficulty.stratified(verdicts, {"census": 16, "sampled": 12})
    # 10 census lines passed, and a third of the drawn lines stands for all 12 others.
    assert result.scaled == pytest.approx(100 * (10 + 12 / 3) / 28)
    assert result.census == (10, 16) and result.sampled == (2, 6)
    # Two drawn papers: the resamples are {a, a}, {a, b} and {b, b}.
    assert result.low == pytest.approx(100 * 10 / 28)
    assert result.high == pytest.approx(100 * 22 / 28)


def test_a_probe_from_the_draw_to_the_estimate(tmp_path, cli, capsys):
    probe = tmp_path / "probe"
    assert difficulty.main(
        ["draw", str(probe), "--census-lines", "3", "--tasks", "casetoy",
         "--tasks-dir", str(FIXTURE_TASKS), "--seed", "7"]
    ) == 0  # fmt: skip
    record = json.loads((probe / "draws.json").read_text())
    draws = record["draws"]
    census = {d["snippet"] for d in draws if d["stratum"] == "census"}
    drawn = [d["snippet"] for d in draws if d["stratum"] == "sampled"]
    assert census == {"norm", "slow sum"}  # 4 and 3 lines
    assert len(drawn) == 1 and drawn[0] in {"affine", "scale", "shift"}
    assert record["lines"] == {"census": 7, "sampled": 4}
    assert [d["context"] for d in draws] == [0, 1, 2]  # one paper: a context each
    for d in draws:
        prompt = (probe / "prompts" / f"{d['key']}.md").read_text()
        assert d["snippet"] in prompt

    # The reference's code for all but "slow sum", which gets a wrong total.
    task = load_task(FIXTURE_TASKS / "casetoy")
    (probe / "answers").mkdir()
    for d in draws:
        body = "\n".join(task.reference_body(d["snippet"]))
        code = "total = 0" if d["snippet"] == "slow sum" else body
        (probe / "answers" / f"{d['key']}.md").write_text(fenced(code))
    capsys.readouterr()
    assert difficulty.main(["estimate", str(probe)]) == 2
    assert "no results.jsonl" in capsys.readouterr().err
    assert difficulty.main(["replay", str(probe), "--model", "probe"]) == 0
    code, _, err = cli(
        "evaluate", "--model", f"replay:{probe / 'answers.jsonl'}", "--paper", "without",
        "--tasks-dir", FIXTURE_TASKS, "--tasks", "casetoy", "--out", probe / "results",
        "--sandbox", "local", "--no-progress",
    )  # fmt: skip
    assert code == 0, err

    assert difficulty.main(["estimate", str(probe)]) == 0
    out = capsys.readouterr().out
    assert "census (>= 3 lines): 4 of 7 lines passed" in out
    assert "sampled: " in out and "standing for 4 lines" in out
    # (4 census lines + all 4 other lines at the drawn snippet's rate 1) of 11.
    assert f"scaled pass@1 about {100 * 8 / 11:.1f}" in out
    assert "casetoy / slow sum" in out


def test_a_changed_task_is_refused_at_the_estimate(tmp_path, capsys):
    probe = tmp_path / "probe"
    (probe / "results").mkdir(parents=True)
    draws = {
        "paper": "without",
        "census_lines": 3,
        "lines": {"census": 4, "sampled": 0},
        "draws": [
            {"key": "s000", "task": "casetoy", "snippet": "norm", "weight": 4,
             "stratum": "census", "context": 0, "prompt_sha": "0" * 16}
        ],
    }  # fmt: skip
    (probe / "draws.json").write_text(json.dumps(draws))
    record = {
        "task": "casetoy", "snippet": "norm", "model": "probe", "paper": "without",
        "task_sha": "x", "prompt_sha": "1" * 16, "weight": 4, "published": "2025-06-01",
        "status": "pass",
    }  # fmt: skip
    (probe / "results" / "results.jsonl").write_text(json.dumps(record) + "\n")
    assert difficulty.main(["estimate", str(probe)]) == 2
    assert "another prompt than the one drawn" in capsys.readouterr().err


def test_a_later_probe_keeps_the_answers_to_the_same_prompts(tmp_path, capsys):
    first, second = tmp_path / "first", tmp_path / "second"
    common = ["--census-lines", "3", "--tasks", "casetoy", "--tasks-dir", str(FIXTURE_TASKS)]
    assert difficulty.main(["draw", str(first), *common, "--seed", "7"]) == 0
    draws = json.loads((first / "draws.json").read_text())["draws"]
    # An answer to the first census prompt, and one made for another prompt of the other.
    norm, slow = (d for d in draws if d["stratum"] == "census")
    rows = [
        {"task": "casetoy", "snippet": norm["snippet"], "paper": "without",
         "prompt_sha": norm["prompt_sha"], "completion": "kept"},
        {"task": "casetoy", "snippet": slow["snippet"], "paper": "without",
         "prompt_sha": "0" * 16, "completion": "stale"},
    ]  # fmt: skip
    replay = tmp_path / "answers.jsonl"
    replay.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()

    assert (
        difficulty.main(["draw", str(second), *common, "--seed", "7", "--carry", str(replay)]) == 0
    )
    assert "1 carried from earlier answers, 2 to answer in 2 context(s)" in capsys.readouterr().err
    again = {d["snippet"]: d for d in json.loads((second / "draws.json").read_text())["draws"]}
    # The same seed draws the same small snippet of an unchanged task.
    assert {d["snippet"] for d in draws} == set(again)
    kept = again[norm["snippet"]]
    assert kept["carried"] == str(replay) and kept["context"] is None
    assert (second / "answers" / f"{kept['key']}.md").read_text() == "kept"
    assert again[slow["snippet"]]["carried"] is None
    assert not (second / "answers" / f"{again[slow['snippet']]['key']}.md").exists()
    assert sorted(d["context"] for d in again.values() if d["context"] is not None) == [0, 1]

    replay.write_text("not json\n")
    assert difficulty.main(["draw", str(second), *common, "--carry", str(replay)]) == 2
    assert f"{replay}:1: not a replay row" in capsys.readouterr().err
