"""Bad input gets exit status 2 and one line naming what to fix."""

import pytest
from conftest import FIXTURE_TASKS, write_replay


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("rcb: error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_help_lists_commands(cli):
    with pytest.raises(SystemExit) as info:
        cli("--help")
    assert info.value.code == 0


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["evaluate", "--shard", "5/4"], "--shard 5/4: write it as I/N"),
        (
            ["evaluate", "--tasks", "no-such-task*"],
            "--tasks no-such-task*: no snippet task matches",
        ),
        (["evaluate", "--samples", "0"], "--samples must be at least 1"),
        (
            ["evaluate", "--model", "replay:/nonexistent/file.jsonl"],
            "/nonexistent/file.jsonl: replay file not found",
        ),
        (
            ["evaluate", "--model", f"replay:{FIXTURE_TASKS}"],
            f"--model replay:{FIXTURE_TASKS}: not a file (a directory",
        ),
        (["prompt", "toy", "no such snippet"], 'task toy has no snippet "no such snippet"'),
        (["prompt", "nope", "x"], "no such task"),
        (["report", "/nonexistent-dir"], "/nonexistent-dir: no results.jsonl here"),
        (["validate", "/nonexistent-dir"], "not a task folder"),
    ],
)
def test_usage_errors(cli, tmp_path, args, expected):
    code, _, err = cli(
        *args, *(["--tasks-dir", FIXTURE_TASKS] if args[0] in ("evaluate", "prompt") else [])
    )
    assert code == 2
    assert expected in _one_line_error(err)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "models:\n  a/b: {display_name: B, provider: a\n  c/d: 1\n",
            "{file}:3: invalid YAML (expected ',' or '}}', but got ':')",
        ),
        (
            "models:\n  openai/x:\n    display_name: X\n    provider: openai\n    colour: blue\n",
            "{file}: model 'openai/x': unknown key 'colour'",
        ),
        (
            "models:\n  openai/x:\n    provider: openai\n",
            "{file}: model 'openai/x': missing required key 'display_name'",
        ),
        (
            "models:\n  openai/x: {display_name: X, provider: openai, context_window: big}\n",
            "{file}: model 'openai/x': key 'context_window': Input should be a valid integer",
        ),
    ],
    ids=["yaml-syntax", "unknown-key", "missing-key", "ill-typed"],
)
def test_registry_errors(cli, tmp_path, text, expected):
    registry = tmp_path / "models.yaml"
    registry.write_text(text)
    (tmp_path / "results.jsonl").write_text("")
    code, _, err = cli("report", tmp_path, "--registry", registry)
    assert code == 2
    assert "Traceback" not in err
    assert expected.format(file=registry) in _one_line_error(err)


def test_bad_replay_line_is_located(cli, tmp_path):
    replay = tmp_path / "bad.jsonl"
    replay.write_text(
        '{"task": "toy", "snippet": "scale", "completion": "x"}\n{"task": "toy", "snippet": 3}\n'
    )
    code, _, err = cli(
        "evaluate", "--model", f"replay:{replay}", "--tasks-dir", FIXTURE_TASKS, "--out", tmp_path
    )
    assert code == 2
    assert f"{replay}:2: field 'snippet' must be a string" in _one_line_error(err)


def test_missing_api_key_is_one_line(cli, tmp_path):
    code, _, err = cli(
        "evaluate", "--model", "openai/gpt-4o", "--tasks-dir", FIXTURE_TASKS, "--out", tmp_path
    )
    assert code == 2
    assert "--model openai/gpt-4o: set OPENAI_API_KEY" in _one_line_error(err)


def test_fail_under(cli, tmp_path):
    replay = write_replay(tmp_path / "r.jsonl", [])
    args = [
        "evaluate",
        "--model",
        f"replay:{replay}",
        "--tasks-dir",
        FIXTURE_TASKS,
        "--out",
        tmp_path / "o",
    ]
    code, out, _ = cli(*args, "--fail-under", "10", "--no-progress")
    assert code == 1
    assert "below --fail-under 10" in out


def test_prompt_prints_exact_bytes(cli):
    code, out, err = cli("prompt", "toy", "norm", "--tasks-dir", FIXTURE_TASKS)
    assert code == 0
    assert '# TODO: Implement block "norm"' in out
    assert err.startswith("prompt_sha ")
