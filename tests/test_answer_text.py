"""Whatever the model's text holds, it is the model's failure with a class: never a
harness error, a stall or a crash of ``rcb evaluate``."""

from __future__ import annotations

import json
import random
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS, fenced, write_replay

from rcb_action.errors import RcbError
from rcb_action.models import Completion, CompletionRequest, LiteLLMModel, ReplayModel
from rcb_action.models._builtin import read_replay
from rcb_action.prompts import build_prompt
from rcb_action.results import Record, ResultStore
from rcb_action.results._store import json_line
from rcb_action.scoring import harness_reach
from rcb_action.splice import MAX_ANSWER_BYTES, extract_code, no_code_reason, reindent, splice
from rcb_action.tasks import load_task
from rcb_action.text import utf8_safe, utf8_safe_data

# The regex extract_code used before it became a line scanner: the oracle for its
# semantics on small answers (on large ones it takes quadratic time).
_OLD_FENCE = re.compile(
    r"^[ \t]*```[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^[ \t]*```[ \t]*$", re.M | re.S
)


def _old_extract(completion: str) -> str | None:
    blocks = [(m["lang"].lower(), m["body"]) for m in _OLD_FENCE.finditer(completion)]
    labelled = [body for lang, body in blocks if lang in {"python", "py", "python3"}]
    chosen = labelled or [body for lang, body in blocks if not lang]
    if not chosen or not chosen[-1].strip():
        return None
    return chosen[-1]


@contextmanager
def _guard(seconds: int = 20) -> Iterator[None]:
    """Fail (instead of hanging) when the body runs past ``seconds``: a generous bound
    for work that is linear; a quadratic regression takes minutes to hours."""

    def expired(signum: int, frame: object) -> None:
        raise TimeoutError(f"took more than {seconds} s: not linear time")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _records(out: Path):
    return {(r.snippet, r.sample): r for r in ResultStore(out).records()}


# extraction


def test_extraction_keeps_the_fence_rules_of_the_old_regex():
    pieces = [
        "```", "```python", "```py", "```Python3", "``` py", "\t```", "  ```  ", "```text",
        "````", "```py thon", "```c++", "x", "y = 1", "\n", "\n", "\n", " ", "\t", "`",
        "\r", "\r\n", "\x00", "é", "\u2028", "\x0c",
    ]  # fmt: skip
    rng = random.Random(12)
    for _ in range(30_000):
        answer = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert extract_code(answer) == _old_extract(answer), repr(answer)


def test_extraction_rules():
    assert extract_code("a\n  ```python\n  x = 1\n  ```\n") == "  x = 1\n"  # indented fences
    assert extract_code("```python\na = 1\n```\n```\nb = 2\n```\n") == "a = 1\n"  # labelled wins
    assert extract_code("```\na = 1\n```\n```\nb = 2\n```") == "b = 2\n"  # else the last bare one
    assert extract_code("```python\nx = 1\n") is None  # never closed
    assert extract_code("```python\n\t \n```") is None
    assert no_code_reason("I cannot do this.") == "no fenced code block"
    assert (
        no_code_reason("```bash\nls\n```") == "no fenced python code block (only other languages)"
    )
    assert no_code_reason("```python\n \n```") == "the last fenced python code block is empty"
    assert no_code_reason(fenced("x = 1")) == ""


@pytest.mark.parametrize(
    "line", ["```x\n", "```python\n", " ```py\nx\n", "```python3 \t\n", "\t```c++ x\n"]
)
def test_pathological_fences_take_linear_time(line):
    """Answers of many fences that never close: the old regex retried each one against
    the rest of the answer (a 96 KB answer took 24 s, 1 MB about 45 minutes)."""
    unclosed = line * ((MAX_ANSWER_BYTES - 64) // len(line))
    closed = unclosed + "```\n```python\nx = 1\n```\n"
    over = line * (2 * 1024 * 1024 // len(line))  # 2 MB: over the size limit
    with _guard():
        assert extract_code(unclosed) is None
        assert no_code_reason(unclosed) == "no fenced code block"
        assert extract_code(closed) == "x = 1\n"
        assert extract_code(over) is None
        assert no_code_reason(over) == "answer is 2048 KB, over the 256 KB limit"


def test_answers_over_the_size_limit_are_no_code_with_the_reason():
    answer = fenced("x = 1")
    at_limit = answer + "." * (MAX_ANSWER_BYTES - len(answer))
    assert len(at_limit.encode()) == MAX_ANSWER_BYTES
    assert extract_code(at_limit) is not None
    assert no_code_reason(at_limit) == ""
    over = at_limit + "é"  # two bytes of UTF-8: counted in bytes, not characters
    assert extract_code(over) is None
    assert no_code_reason(over) == "answer is 257 KB, over the 256 KB limit"
    assert no_code_reason("a" * 300 * 1024) == "answer is 300 KB, over the 256 KB limit"


# splicing any text


@pytest.mark.parametrize(
    "code",
    [
        "\tif x:\n\t\ty = 1\n",
        "y = a * x\r\nz = 1\r\n",
        "y = a * x\rz = 1",
        "\x0cy = a * x\n",
        "y = a * x\x00\n",
        "y = '\ud800' * 2\n",
        "y = 1\u2028z = 2\n",
        "\n\n   \n",
        "",
    ],
    ids=["tabs", "crlf", "cr", "formfeed", "nul", "surrogate", "line-separator", "blank", "empty"],
)
def test_splice_takes_any_text(code):
    task = load_task(FIXTURE_TASKS / "toy")
    spliced = splice(task, "scale", code)
    spliced.encode("utf-8")  # can be written into a sandbox
    assert "y = y + b" in spliced  # the rest of the file is intact
    for line in reindent(code, "    "):
        assert line == "\n" or line.startswith("    ")
    if "\x00" in code:
        assert "\x00" in spliced  # kept: the sandbox's compiler fails it as the model's


# the reach scan


@pytest.mark.parametrize(
    "code",
    [
        "_ = " + "+".join(["1"] * 3000),
        "_ = " + "not " * 60_000 + "x",
        "y = 1\x00\n",
        "y = '\ud800'\n",
        "(" * 100_000,
        "def f(:\n",
    ],
    ids=["deep-sum", "not-chain", "nul", "surrogate", "parens", "syntax"],
)
def test_reach_scan_takes_any_text(code):
    with _guard():
        assert harness_reach(code) == []


def test_reach_scan_still_finds_reach_in_broken_code_and_refuses_huge_code():
    assert harness_reach("import sys\x00\nsys.exit(0)\ndef (")
    with _guard():
        reasons = harness_reach("x = 1\n" * 100_000)
    assert len(reasons) == 1 and "600,000 characters" in reasons[0]


# lone surrogates


def test_utf8_safe_replaces_lone_surrogates_only():
    assert utf8_safe("a\ud800b\udcffc") == "a\ufffdb\ufffdc"
    assert utf8_safe("\ud83d\ude00") == "\U0001f600"  # a well-formed pair is its character
    assert utf8_safe("é\x00\t") == "é\x00\t"
    assert utf8_safe_data({"k\ud800": ["\udfff", 1, None]}) == {"k\ufffd": ["\ufffd", 1, None]}


def test_every_answer_and_replay_field_is_valid_text(tmp_path):
    assert Completion(text="x\ud800").text == "x\ufffd"
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"task": "to\\ud800y", "snippet": "s\\udfff", "completion": "\\ud800\\ud83d\\ude00"}\n',
        encoding="utf-8",
    )
    rows, _ = read_replay(path, ("task", "snippet", "completion"), {"sample", "model"})
    row = rows[0][1]
    assert [row["task"], row["snippet"], row["completion"]] == [
        "to\ufffdy",
        "s\ufffd",
        "\ufffd\U0001f600",
    ]


@pytest.mark.parametrize(
    "line,message",
    [("[" * 100_000, "nested too deeply"), ('{"sample": ' + "1" * 5000 + "}", "digits")],
)
def test_a_hostile_replay_line_is_a_one_line_error(tmp_path, line, message):
    path = tmp_path / "r.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(RcbError, match=message) as caught:
        ReplayModel(path)
    assert f"{path}:1: not valid JSON" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_litellm_answers_are_valid_text():
    task = load_task(FIXTURE_TASKS / "toy")
    model = LiteLLMModel("openai/gpt-4o-mini", mock_responses=[fenced("y = a * x  # \ud800")])
    request = CompletionRequest(
        task=task, snippet="scale", sample=0, prompt=build_prompt(task, "scale", paper=False)
    )
    text = model.complete(request).text
    assert "\ufffd" in text
    text.encode("utf-8")


def test_the_store_writes_a_record_with_lone_surrogates(tmp_path):
    line = json_line(_a_record(completion="x\ud800", message="m\udcff", note="\ud800"))
    record = json.loads(line)
    assert [record[k] for k in ("completion", "message", "note")] == [
        "x\ufffd",
        "m\ufffd",
        "\ufffd",
    ]
    store = ResultStore(tmp_path)
    store.append(_a_record(completion="x\ud800"))
    assert [r.completion for r in store.records()] == ["x\ufffd"]


def _a_record(**fields: object) -> Record:
    return Record(
        task="toy",
        snippet="scale",
        model="m",
        task_sha="t",
        prompt_sha="p",
        weight=1,
        published="2025-06-01",
        status="fail",
        **fields,
    )


# through rcb evaluate


def test_lone_surrogates_in_a_replay_go_through_evaluate_and_resume(tmp_path, cli):
    rows = [
        {"task": "toy", "snippet": "scale", "completion": "Sure \ud800\n" + fenced("y = a * x  # \udcff")},
        {"task": "toy", "snippet": "shift", "completion": "\ud800"},
        {"task": "toy", "snippet": "norm", "completion": fenced("return float(len('\ud800'))")},
        {"task": "toy", "snippet": "affine", "completion": fenced("y = a * x\n# " + "\ud800" * MAX_ANSWER_BYTES)},
    ]  # fmt: skip
    replay = write_replay(tmp_path / "surrogates.jsonl", rows)
    assert "\\ud800" in replay.read_text(encoding="utf-8")  # escapes, as JSON spells them
    out = tmp_path / "out"
    args = [
        "evaluate", "--model", f"replay:{replay}", "--tasks-dir", FIXTURE_TASKS, "--tasks", "toy",
        "--out", out, "--no-progress",
    ]  # fmt: skip
    code, _, err = cli(*args)
    assert code == 0, err
    records = _records(out)
    assert len(records) == 5  # one per snippet of toy; "slow sum" is not in the file: no_code
    scale = records[("scale", 0)]
    assert scale.status == "pass", scale.message
    assert "\ufffd" in scale.completion and "\ufffd" in (scale.code or "")
    logs = out / str(scale.log_dir)
    assert "\ufffd" in (logs / "completion.md").read_text(encoding="utf-8")
    assert "\ufffd" in (logs / "toy.py").read_text(encoding="utf-8")  # the spliced file
    assert (records[("shift", 0)].failure_class, records[("shift", 0)].message) == (
        "no_code",
        "no fenced code block",
    )
    norm = records[("norm", 0)]
    assert norm.status == "fail" and norm.failure_class == "assertion", norm.message
    assert (out / str(norm.log_dir) / "completion.md").is_file()
    affine = records[("affine", 0)]
    size_kb = -(-len(utf8_safe(rows[3]["completion"]).encode()) // 1024)
    assert (affine.failure_class, affine.message) == (
        "no_code",
        f"answer is {size_kb} KB, over the 256 KB limit",
    )
    for record in records.values():
        assert record.failure_class != "harness_error", record.message
    code, _, err = cli(*args)
    assert code == 0, err
    assert "nothing to do" in err
    assert len(ResultStore(out).records()) == 5


@pytest.mark.parametrize(
    "code",
    [
        pytest.param("_ = " + "+".join(["1"] * 3000), id="deep-sum"),
        # 60,000 nots (240 KB): the parser runs out of memory; a longer chain is over
        # the size limit (see the last case)
        pytest.param("_ = " + "not " * 60_000 + "x", id="not-chain"),
        pytest.param("y = a * x\x00", id="nul"),
    ],
)
def test_code_python_cannot_compile_is_the_models_failure(tmp_path, cli, code):
    record = _evaluate_one(tmp_path, cli, fenced(code))
    assert record.status == "fail"
    assert record.failure_class not in (None, "harness_error", "no_code"), record.message


def test_a_100k_not_chain_is_over_the_size_limit(tmp_path, cli):
    record = _evaluate_one(tmp_path, cli, fenced("_ = " + "not " * 100_000 + "x"))
    assert (record.status, record.failure_class) == ("fail", "no_code")
    assert record.message == "answer is 391 KB, over the 256 KB limit"


def _evaluate_one(tmp_path, cli, completion):
    """The record of ``completion`` as the answer for toy's "scale"."""
    replay = write_replay(
        tmp_path / "hostile.jsonl", [{"task": "toy", "snippet": "scale", "completion": completion}]
    )
    out = tmp_path / "out"
    exit_code, _, err = cli(
        "evaluate", "--model", f"replay:{replay}", "--tasks-dir", FIXTURE_TASKS, "--tasks", "toy",
        "--out", out, "--no-progress",
    )  # fmt: skip
    assert exit_code == 0, err
    return _records(out)[("scale", 0)]
