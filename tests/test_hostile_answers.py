"""The hostile-answer suite of issue 12: answers written to pass without doing the work, or
to take the harness down, run through the real ``rcb evaluate`` path with ``replay:``
completions, on the local (bubblewrap) and Docker backends.

- No forged pass on a task with cases and checks: an answer that rebinds every assertion
  helper it can reach (``numpy.testing``, ``np.allclose``, ``math.isclose``,
  ``pytest.approx``, ``torch.testing``) or returns always-equal objects scores 0; on a
  task with in-process tests the same answer is labelled forgeable in the report.
- No answer is a harness error: compile bombs, a quadratic fence pattern, an oversized
  answer and a lone surrogate are the model's failures, with a class.
- Totals bounded: memory of all processes together, ``/tmp`` and the workspace (bytes
  and files), file size; Docker's ``/tmp`` does not carry over between attempts.
- No host secret or file reaches any record or log; the run completes and resumes.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS, TASKS, fenced, write_replay

from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, evaluate
from rcb_action.sandbox import Limits
from rcb_action.tasks import Task, load_tasks

pytestmark = pytest.mark.slow

# Rebinds every assertion helper the checks could use, in any module it can import.
FORGE = """\
import math as _math
import numpy as _np
_np.testing.assert_allclose = lambda *a, **k: None
_np.testing.assert_array_equal = lambda *a, **k: None
_np.testing.assert_array_almost_equal = lambda *a, **k: None
_np.testing.assert_equal = lambda *a, **k: None
_np.allclose = lambda *a, **k: True
_np.array_equal = lambda *a, **k: True
_math.isclose = lambda *a, **k: True
try:
    import pytest as _pytest

    class _Approx:
        def __init__(self, *a, **k):
            pass

        def __eq__(self, other):
            return True

    _pytest.approx = _Approx
except ImportError:
    pass
try:
    import torch as _torch

    _torch.testing.assert_close = lambda *a, **k: None
    _torch.allclose = lambda *a, **k: True
    _torch.equal = lambda *a, **k: True
except ImportError:
    pass

"""


# A float that equals everything, and stays one when multiplied.
ALWAYS = """\
class _Always(float):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __mul__(self, other):
        return self

    __rmul__ = __mul__
    __hash__ = float.__hash__
"""


def _backend_or_skip(sandbox: str, request: pytest.FixtureRequest) -> None:
    if sandbox == "docker":
        request.getfixturevalue("docker_base_image")
    elif shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but bubblewrap (as root) is not available")
        pytest.skip("bubblewrap is not installed or not root: the local backend is unconfined")


BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker", marks=pytest.mark.docker),
]


def _run(rows, out: Path, tasks_dir: Path, tasks: str, sandbox: str, **limits) -> list:
    replay = write_replay(out.parent / f"{out.name}.jsonl", rows)
    evaluate(
        EvalConfig(
            models=[f"replay:{replay}"],
            out=out,
            tasks_dir=tasks_dir,
            tasks=tasks,
            samples=max(int(r.get("sample", 0)) for r in rows) + 1,
            workers=2,
            sandbox=sandbox,
            progress=False,
            limits=Limits(**limits),
        )
    )
    return ResultStore(out).records()


def _most_checked(task: Task) -> str:
    return max(task.snippet_names(), key=lambda name: len(task.tests_for(name)))


def _forging_answer(body: str) -> str:
    return fenced(FORGE + ALWAYS + body)


@pytest.mark.parametrize("sandbox", BACKENDS)
def test_rebinding_the_assertion_helpers_forges_nothing(sandbox, request, tmp_path, cli):
    """Every task with cases and checks, answered by code that rebinds the assertion
    helpers and does nothing else, scores 0; an in-process task with the same answer is
    labelled forgeable.

    The forging code is the same in every snippet and can only reach the run sandbox, so
    one snippet per task (the one with the most checks) is asked; that `null` fails every
    snippet is `rcb validate`'s (see test_all_tasks)."""
    _backend_or_skip(sandbox, request)
    tasks = [t for t in load_tasks(TASKS) if t.grading == "cases"]
    # Docker builds an image per environment; the numpy ones keep this test quick.
    if sandbox == "docker":
        tasks = [t for t in tasks if t.config.env == "numpy"]
    assert tasks, "no task with cases and checks to forge"
    rows = [
        {"task": t.id, "snippet": _most_checked(t), "model": "forger", "completion": _forging_answer("pass\n")}
        for t in tasks
    ]  # fmt: skip
    asked = {(row["task"], row["snippet"]) for row in rows}
    records = [
        r
        for r in _run(rows, tmp_path / "real", TASKS, ",".join(t.id for t in tasks), sandbox)
        if (r.task, r.snippet) in asked  # the replay has no answer for the other snippets
    ]
    assert len(records) == len(rows)
    assert all(r.grading == "cases" for r in records)
    passed = [(r.task, r.snippet) for r in records if r.status == "pass"]
    assert not passed, f"forged passes: {passed}"
    assert not [r for r in records if r.status == "harness_error"]

    # Always-equal objects in place of the values, on the fixtures (cases and in-process).
    rows = [
        {"task": "caseguard", "snippet": "setup", "model": "forger", "completion": _forging_answer("SCALE = _Always(0)\n")},
        {"task": "caseguard", "snippet": "triple", "model": "forger", "completion": _forging_answer("return _Always(0)\n")},
        {"task": "guard", "snippet": "setup", "model": "forger", "completion": fenced(ALWAYS + "SCALE = _Always(0)\n")},
    ]  # fmt: skip
    out = tmp_path / "fixtures"
    records = {
        (r.task, r.snippet): r for r in _run(rows, out, FIXTURE_TASKS, "caseguard,guard", sandbox)
    }
    assert records[("caseguard", "setup")].status == "fail"
    assert records[("caseguard", "triple")].status == "fail"
    # In process, an always-equal object beats bare asserts: that is why such tasks are labelled.
    guard = records[("guard", "setup")]
    assert guard.grading == "in-process" and guard.status == "pass"
    code, stdout, _ = cli("report", out, "--json", tmp_path / "report.json")
    assert code == 0 and "forgeable" in stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert "forgeable" in json.dumps(report)


# (snippet code, the outcome it must get: "pass", a failure class, or None for any failure)
NOT_HARNESS_ERRORS = {
    "recursion when compiled": ("SCALE = " + "+".join(["1"] * 3000) + "\n", None),
    "parser out of memory": ("SCALE = " + "not " * 60000 + "1\n", None),
    "a NUL byte": ("SCALE = 3\x00\n", "syntax"),
    "a lone surrogate in a comment": ("SCALE = 3  # \ud800\n", "pass"),
    "a lone surrogate in a string": ("SCALE = len('\udcff')\n", None),
}


@pytest.mark.parametrize("sandbox", BACKENDS)
def test_no_answer_is_a_harness_error(sandbox, request, tmp_path):
    """Answers that break compilers, encoders or extractors are the model's failures, with
    a class; the correct answer replayed after each still passes; the run resumes."""
    _backend_or_skip(sandbox, request)
    rows = []
    names = list(NOT_HARNESS_ERRORS)
    for index, name in enumerate(names):
        rows.append(
            {
                "task": "caseguard",
                "snippet": "setup",
                "sample": 2 * index,
                "completion": fenced(NOT_HARNESS_ERRORS[name][0]),
            }
        )
        rows.append(
            {
                "task": "caseguard",
                "snippet": "setup",
                "sample": 2 * index + 1,
                "completion": fenced("SCALE = 3"),
            }
        )
    rows.append(
        {"task": "caseguard", "snippet": "triple", "sample": 0, "completion": "```\n" * 40000}
    )
    rows.append(
        {
            "task": "caseguard",
            "snippet": "triple",
            "sample": 1,
            "completion": fenced("return 3 * x\n" + "#" * (300 * 1024)),
        }
    )
    out = tmp_path / "out"
    records = {
        (r.snippet, r.sample): r for r in _run(rows, out, FIXTURE_TASKS, "caseguard", sandbox)
    }
    for index, name in enumerate(names):
        record = records[("setup", 2 * index)]
        wanted = NOT_HARNESS_ERRORS[name][1]
        if wanted == "pass":
            assert record.status == "pass", f"{name}: {record.status} {record.message}"
        else:
            assert record.status == "fail", f"{name}: {record.status} {record.message}"
            assert record.failure_class not in (None, "harness_error"), f"{name}: {record.message}"
            if wanted:
                assert record.failure_class == wanted, f"{name}: {record.failure_class}"
        assert records[("setup", 2 * index + 1)].status == "pass", name
    assert records[("triple", 0)].failure_class == "no_code"
    assert records[("triple", 1)].failure_class == "no_code"
    assert "over the 256 KB limit" in records[("triple", 1)].message
    before = len(ResultStore(out).records())
    _run(rows, out, FIXTURE_TASKS, "caseguard", sandbox)
    assert len(ResultStore(out).records()) == before  # every attempt was done: nothing reruns


def _confined_or_skip(sandbox: str) -> None:
    if sandbox == "local" and os.geteuid() != 0:
        pytest.skip("the local backend bounds totals with cgroups and tmpfs mounts as root only")


# name -> (code run when the snippet runs at import, the failure class it must get or None)
LIMIT_ATTACKS = {
    "four children, each under the limit, together over it": (
        "import os, time\n"
        "kids = []\n"
        "for _ in range(4):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        block = bytearray(200 * 2**20)\n"
        "        for i in range(0, len(block), 4096):\n"
        "            block[i] = 1\n"
        "        time.sleep(3)\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "for pid in kids:\n"
        "    os.waitpid(pid, 0)\n"
        "SCALE = 3",
        "memory",
    ),
    "fill /tmp, each file under the file-size limit": (
        "chunk = b'x' * 2**20\n"
        "for n in range(16):\n"
        "    with open(f'/tmp/fill{n}', 'wb') as f:\n"
        "        for _ in range(16):\n"
        "            f.write(chunk)\n"
        "SCALE = 3",
        None,
    ),
    "fill the workspace, each file under the file-size limit": (
        "chunk = b'x' * 2**20\n"
        "for n in range(16):\n"
        "    with open(f'fill{n}', 'wb') as f:\n"
        "        for _ in range(16):\n"
        "            f.write(chunk)\n"
        "SCALE = 3",
        None,
    ),
    "a hundred thousand files": (
        "import os\n"
        "os.makedirs('many', exist_ok=True)\n"
        "for i in range(100000):\n"
        "    open(f'many/{i}', 'w').close()\n"
        "SCALE = 3",
        None,
    ),
    "one file over the file-size limit": (
        "import signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "with open('big', 'wb') as f:\n"
        "    f.write(b'x' * (80 * 2**20))\n"
        "SCALE = 3",
        None,
    ),
}


@pytest.mark.parametrize("sandbox", BACKENDS)
def test_limits_bound_the_total(sandbox, request, tmp_path):
    """Each limit is hit with the documented failure, the harness survives, and the correct
    answer after each attack passes."""
    _backend_or_skip(sandbox, request)
    _confined_or_skip(sandbox)
    rows = []
    names = list(LIMIT_ATTACKS)
    for index, name in enumerate(names):
        rows.append(
            {
                "task": "caseguard",
                "snippet": "setup",
                "sample": 2 * index,
                "completion": fenced(LIMIT_ATTACKS[name][0]),
            }
        )
        rows.append(
            {
                "task": "caseguard",
                "snippet": "setup",
                "sample": 2 * index + 1,
                "completion": fenced("SCALE = 3"),
            }
        )
    limits = {
        "memory_mb": 512,
        "tmp_mb": 64,
        "workspace_mb": 64,
        "workspace_files": 2000,
        "file_size_mb": 32,
    }
    records = {
        (r.snippet, r.sample): r
        for r in _run(rows, tmp_path / "out", FIXTURE_TASKS, "caseguard", sandbox, **limits)
    }
    for index, name in enumerate(names):
        record = records[("setup", 2 * index)]
        assert record.status == "fail", f"{name}: {record.status} {record.message}"
        assert record.failure_class != "harness_error", f"{name}: {record.message}"
        wanted = LIMIT_ATTACKS[name][1]
        if wanted:
            assert record.failure_class == wanted, (
                f"{name}: {record.failure_class} {record.message}"
            )
        assert records[("setup", 2 * index + 1)].status == "pass", f"after {name}"


@pytest.mark.docker
def test_docker_tmp_does_not_carry_over_between_attempts(tmp_path, docker_base_image):
    """One attempt leaves a file in /tmp; the next, in the same warm container, must not
    find it (one worker, so both run in the one container, in order)."""
    marker = f"/tmp/rcb-leak-{secrets.token_hex(4)}"
    rows = [
        {"task": "caseguard", "snippet": "setup", "sample": 0, "completion": fenced(f"open('{marker}', 'w').write('A')\nSCALE = 3")},
        {"task": "caseguard", "snippet": "setup", "sample": 1, "completion": fenced(f"import os\nSCALE = 0 if os.path.exists('{marker}') else 3")},
    ]  # fmt: skip
    replay = write_replay(tmp_path / "leak.jsonl", rows)
    evaluate(
        EvalConfig(
            models=[f"replay:{replay}"], out=tmp_path / "out", tasks_dir=FIXTURE_TASKS,
            tasks="caseguard", samples=2, workers=1, sandbox="docker", progress=False,
        )
    )  # fmt: skip
    records = {(r.snippet, r.sample): r for r in ResultStore(tmp_path / "out").records()}
    assert records[("setup", 0)].status == "pass"
    assert records[("setup", 1)].status == "pass", "the second attempt saw the first one's /tmp"


@pytest.mark.parametrize("sandbox", BACKENDS)
def test_no_host_secret_reaches_a_record_or_log(sandbox, request, tmp_path, monkeypatch):
    """The code under test looks for secrets everywhere it can and returns what it finds as
    case data; nothing of the host's reaches the results folder."""
    _backend_or_skip(sandbox, request)
    secret = f"canary-{secrets.token_hex(8)}"
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-{secret}")
    monkeypatch.setenv("GITHUB_TOKEN", f"ghp-{secret}")
    home_file = Path.home() / f".rcb-canary-{secrets.token_hex(4)}"
    home_file.write_text(secret)
    snoop = (
        "import glob, os\n"
        "found = [f'{k}={v}' for k, v in os.environ.items()]\n"
        f"for path in ['/proc/1/environ', '/proc/self/environ', {str(home_file)!r}] + glob.glob('/root/*') + glob.glob('/home/*/*'):\n"
        "    try:\n"
        "        found.append(open(path, errors='replace').read())\n"
        "    except OSError:\n"
        "        pass\n"
        "SCALE = ' '.join(found)\n"
    )
    rows = [{"task": "caseguard", "snippet": "setup", "completion": fenced(snoop)}]
    try:
        _run(rows, tmp_path / "out", FIXTURE_TASKS, "caseguard", sandbox)
    finally:
        home_file.unlink(missing_ok=True)
    leaked = [
        str(p)
        for p in (tmp_path / "out").rglob("*")
        if p.is_file() and secret in p.read_text(errors="replace")
    ]
    assert not leaked, f"a host secret reached the results: {leaked}"
