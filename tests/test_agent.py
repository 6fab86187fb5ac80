"""The tool-calling loop on its own: budgets, stage rules, tool errors and the step log,
with a recording fake sandbox (nothing runs) and scripted sessions; the litellm agent
through litellm's real code path with mock tool calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rcb_action.agent import (
    AgentLoop,
    AgentTurn,
    Budget,
    LiteLLMAgent,
    ReplayAgent,
    ScriptedSession,
    StepLog,
    ToolCall,
    Workbench,
    clip_output,
    turn_from_dict,
    turn_to_dict,
)
from rcb_action.errors import RcbError
from rcb_action.sandbox import ExecResult, Sandbox


class FakeSandbox(Sandbox):
    """Records every exec and answers with exit 0 and a fixed output."""

    python = "python3"
    workspace = "/work"

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def exec(self, argv, *, timeout_s, cwd=".", env=None, stdin=None) -> ExecResult:
        self.calls.append({"argv": argv, "timeout_s": timeout_s, "cwd": cwd, "stdin": stdin})
        return ExecResult(returncode=0, stdout="out\n", stderr="", duration_s=0.0)

    def write_files(self, files, *, writable=True) -> None:
        raise AssertionError("the tools write through exec, as the sandbox user")

    def mkdir(self, path, *, writable=True) -> None:
        raise AssertionError("not used")

    def read_file(self, path) -> bytes:
        raise AssertionError("the tools read through exec, as the sandbox user")

    def remove(self, path) -> None:
        raise AssertionError("not used")

    def cleanup(self) -> None:
        pass


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"c-{name}", name=name, arguments=json.dumps(arguments))


def make_loop(
    tmp_path: Path, turns: list[AgentTurn], *, turns_budget: int = 50, wall: float = 600
) -> tuple[AgentLoop, FakeSandbox]:
    sandbox = FakeSandbox()
    log = StepLog(tmp_path / "steps.jsonl")
    loop: AgentLoop
    bench = Workbench(sandbox, "project", time_left=lambda: loop.time_left(), max_timeout_s=300)
    loop = AgentLoop(
        ScriptedSession(turns), bench, Budget(turns_budget, 10**9, wall, 100.0), log, "system"
    )
    return loop, sandbox


def steps(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "steps.jsonl").read_text().splitlines()]


def test_tools_run_in_the_sandbox_and_submit_ends_the_stage(tmp_path):
    loop, sandbox = make_loop(
        tmp_path,
        [
            AgentTurn(tool_calls=[call("run", command="ls -la", timeout_s=5000)]),
            AgentTurn(
                tool_calls=[
                    call("write_file", path="a/b.py", content="x = 1\n"),
                    call("read_file", path="a/b.py"),
                    call("submit", note="done"),
                    call("run", command="echo after submit"),
                ]
            ),
        ],
    )
    end = loop.run_stage("code_impl", "write code")
    assert end.reason == "submitted" and end.note == "done"
    run, write, read = sandbox.calls
    assert run["argv"] == ["bash", "-c", "ls -la"] and run["cwd"] == "project"
    assert run["timeout_s"] == 300  # capped by the longest a command may run
    assert write["argv"][:2] == ["python3", "-c"] and write["argv"][-1] == "a/b.py"
    assert write["stdin"] == b"6\nx = 1\n"  # length-prefixed: no EOF needed
    assert read["argv"][-2] == "a/b.py"
    tool_answers = [m for m in loop.messages if m["role"] == "tool"]
    assert len(tool_answers) == 5  # every call is answered, the one after submit too
    assert tool_answers[-1]["content"].startswith("not run")
    logged = steps(tmp_path)
    assert [s["event"] for s in logged].count("tool") == 4
    assert all(s["time"].endswith("+00:00") for s in logged)


def test_stage_guard_refuses_without_running(tmp_path):
    loop, sandbox = make_loop(
        tmp_path, [AgentTurn(tool_calls=[call("run", command="rm -rf ."), call("submit")])]
    )
    end = loop.run_stage("plan", "plan", guard=lambda c: "no commands" if c.name == "run" else None)
    assert end.reason == "submitted"
    assert sandbox.calls == []
    assert loop.messages[-2]["content"] == "error: no commands"


def test_the_turn_budget_ends_the_stage(tmp_path):
    turns = [AgentTurn(tool_calls=[call("run", command="true")]) for _ in range(10)]
    loop, sandbox = make_loop(tmp_path, turns, turns_budget=3)
    end = loop.run_stage("train_debug", "debug")
    assert (end.reason, end.limit) == ("budget", "turns")
    assert len(sandbox.calls) == 3
    assert loop.usage.turns == 3
    # A later stage gets no turn at all.
    assert loop.run_stage("next", "more").reason == "budget"
    assert steps(tmp_path)[-1]["event"] == "budget_exhausted"


def test_the_wall_time_budget_caps_commands(tmp_path):
    loop, sandbox = make_loop(
        tmp_path,
        [AgentTurn(tool_calls=[call("run", command="sleep 100"), call("submit")])],
        wall=30,
    )
    loop.run_stage("train_debug", "debug")
    assert sandbox.calls[0]["timeout_s"] <= 30


def test_two_answers_without_tools_end_the_stage(tmp_path):
    loop, _ = make_loop(tmp_path, [AgentTurn(text="Thinking."), AgentTurn(text="Done?")])
    end = loop.run_stage("plan", "plan")
    assert end.reason == "stopped"
    assert any("call submit" in str(m["content"]) for m in loop.messages if m["role"] == "user")


def test_bad_tool_calls_are_answered_not_raised(tmp_path):
    loop, sandbox = make_loop(
        tmp_path,
        [
            AgentTurn(
                tool_calls=[
                    ToolCall(id="1", name="run", arguments="{not json"),
                    ToolCall(id="2", name="rm", arguments="{}"),
                    call("run", command=5),
                    call("run", command="x", timeout_s=-1),
                    call("submit"),
                ]
            )
        ],
    )
    loop.run_stage("code_impl", "code")
    answers = [m["content"] for m in loop.messages if m["role"] == "tool"]
    assert answers[0].startswith("error: the arguments are not valid JSON")
    assert answers[1].startswith("error: no tool named 'rm'")
    assert answers[2] == "error: 'command' must be a string"
    assert answers[3] == "error: 'timeout_s' must be a positive number"
    assert sandbox.calls == []


def test_long_output_is_cut_in_the_middle():
    text = "a" * 10_000 + "b" * 20_000
    cut = clip_output(text, 16_000)
    assert cut.startswith("a" * 4000) and cut.endswith("b" * 12_000)
    assert "characters cut" in cut
    assert clip_output("short") == "short"


def test_turns_round_trip_through_dicts():
    turn = AgentTurn(text="hi", tool_calls=[call("run", command="ls")])
    again = turn_from_dict(turn_to_dict(turn), 0)
    assert again.text == "hi" and again.tool_calls[0].parsed() == {"command": "ls"}
    with pytest.raises(ValueError, match="'name'"):
        turn_from_dict({"tool_calls": [{"arguments": {}}]}, 0)


def test_litellm_agent_replays_tool_calls_through_litellm(tmp_path):
    agent = LiteLLMAgent(
        "openai/gpt-4o-mini",
        mock_turns=[
            "litellm.RateLimitError",
            {
                "content": "Planning.",
                "tool_calls": [{"name": "submit", "arguments": {"note": "ok"}}],
            },
        ],
        backoff_s=0.001,
    )
    agent.check()  # mocks need no key
    turn = agent.start(None, 0).respond([{"role": "user", "content": "go"}], [])  # type: ignore[arg-type]
    assert turn.text == "Planning."
    assert [(c.name, c.parsed()) for c in turn.tool_calls] == [("submit", {"note": "ok"})]
    assert turn.tokens_in > 0 and turn.tokens_out > 0
    assert agent.retries == 1
    # The assistant message goes back into the conversation in the provider's form.
    message = turn.message()
    assert message["tool_calls"][0]["function"]["name"] == "submit"


def test_litellm_agent_without_a_key_says_which(monkeypatch):
    agent = LiteLLMAgent("openai/gpt-4o-mini")
    with pytest.raises(RcbError, match="OPENAI_API_KEY"):
        agent.check()


def test_replay_file_is_checked_line_by_line(tmp_path):
    good = {"task": "t", "turns": [{"content": "x", "tool_calls": [{"name": "submit"}]}]}
    path = tmp_path / "a.jsonl"
    path.write_text(
        json.dumps(good) + "\n" + json.dumps({**good, "sample": 1, "model": "m"}) + "\n"
    )
    assert ReplayAgent(path).name == "m"  # the one model the file names
    path.write_text(json.dumps(good) + "\n")
    assert ReplayAgent(path).name == "replay:a"
    for row, message in [
        ("not json", "not valid JSON"),
        (json.dumps({"turns": []}), "field 'task' must be a string"),
        (json.dumps({"task": "t", "turns": {}}), "'turns' must be a list"),
        (json.dumps({"task": "t", "turns": [], "colour": 1}), "unknown field 'colour'"),
        (json.dumps({"task": "t", "turns": [{"tool_calls": [{}]}]}), "each tool call needs"),
        (json.dumps(good) + "\n" + json.dumps(good), "a second script"),
    ]:
        path.write_text(row + "\n")
        with pytest.raises(RcbError, match=message):
            ReplayAgent(path)
