"""``rcb prompt --all``: every prompt of a selection as JSON lines, to run a model
elsewhere and send back a replay file that is checked against the current prompts."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import FIXTURE_TASKS

from rcb_action.models import fenced
from rcb_action.results import ResultStore
from rcb_action.tasks import load_task


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_prompt_is_exported_with_its_sha(tmp_path, cli):
    out = tmp_path / "prompts.jsonl"
    code, _, err = cli(
        "prompt", "--all", "--tasks-dir", FIXTURE_TASKS, "--tasks", "casetoy,toy",
        "--paper", "with", "--samples", "2", "--out", out,
    )  # fmt: skip
    assert code == 0, err
    rows = _rows(out)
    assert len(rows) == 2 * (5 + 5) and "20 prompt(s) of 2 task(s)" in err
    assert {(r["task"], r["sample"]) for r in rows} == {
        (t, s) for t in ("casetoy", "toy") for s in (0, 1)
    }
    for row in rows[:3]:
        code, text, sha_line = cli(
            "prompt", row["task"], row["snippet"], "--tasks-dir", FIXTURE_TASKS, "--paper", "with"
        )
        assert code == 0
        assert text == row["prompt"]  # the exact bytes a live model is sent
        assert sha_line.startswith(f"prompt_sha {row['prompt_sha']} ")
        assert row["paper"] == "with" and "paper" in row["prompt"].lower()


def test_an_exported_file_with_completions_is_scored_as_a_replay(tmp_path, cli):
    exported = tmp_path / "prompts.jsonl"
    assert cli(
        "prompt", "--all", "--tasks-dir", FIXTURE_TASKS, "--tasks", "casetoy",
        "--paper", "without", "--out", exported,
    )[0] == 0  # fmt: skip
    task = load_task(FIXTURE_TASKS / "casetoy")
    answers = tmp_path / "answers.jsonl"
    with answers.open("w", encoding="utf-8") as handle:
        for row in _rows(exported):
            row["completion"] = fenced("".join(task.reference_body(row["snippet"])))
            row["model"] = "lab/own-model"
            handle.write(json.dumps(row) + "\n")
    out = tmp_path / "out"
    code, _, err = cli(
        "evaluate", "--model", f"replay:{answers}", "--tasks-dir", FIXTURE_TASKS,
        "--tasks", "casetoy", "--paper", "without", "--out", out, "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    records = ResultStore(out).records()
    shas = {(r["snippet"]): r["prompt_sha"] for r in _rows(exported)}
    assert len(records) == 5
    for record in records:
        assert record.model == "lab/own-model" and record.status == "pass"
        assert record.prompt_sha == shas[record.snippet]


def test_a_replay_made_for_an_older_prompt_is_refused_in_one_line(tmp_path, fixture_tasks, cli):
    exported = tmp_path / "prompts.jsonl"
    assert cli(
        "prompt", "--all", "--tasks-dir", fixture_tasks, "--tasks", "casetoy",
        "--paper", "without", "--out", exported,
    )[0] == 0  # fmt: skip
    rows = _rows(exported)
    for row in rows:
        row["completion"] = fenced("pass")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    helpers = fixture_tasks / "casetoy" / "src" / "helpers.py"  # a context file: in every prompt
    helpers.write_text(helpers.read_text() + "\n# changed after the export\n")
    out = tmp_path / "out"
    code, _, err = cli(
        "evaluate", "--model", f"replay:{answers}", "--tasks-dir", fixture_tasks,
        "--tasks", "casetoy", "--paper", "without", "--out", out, "--no-progress",
    )  # fmt: skip
    assert code == 2
    [line] = err.strip().splitlines()
    assert f"{answers}:1: prompt_sha {rows[0]['prompt_sha'][:12]} is not the current prompt" in line
    assert "export again with rcb prompt --all" in line
    assert not (out / "results.jsonl").exists()


def test_export_usage_errors_are_one_line(tmp_path, cli):
    code, _, err = cli("prompt", "--all", "--tasks-dir", FIXTURE_TASKS)
    assert code == 2 and "give --out FILE" in err
    code, _, err = cli("prompt", "toy", "--all", "--out", tmp_path / "p.jsonl")
    assert code == 2 and "give no TASK_ID" in err
    code, _, err = cli("prompt", "--tasks-dir", FIXTURE_TASKS)
    assert code == 2 and "give TASK_ID and SNIPPET_NAME, or --all --out FILE" in err
