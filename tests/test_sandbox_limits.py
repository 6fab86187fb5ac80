"""Totals are bounded per exec, on both backends: memory of all processes together,
process count, /tmp, the attempt folder's bytes and files, file size; and nothing of
one exec is left for the next. Small limits keep these quick."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURE_TASKS

from rcb_action.sandbox import Limits, Sandbox, UnsafeFileError, get_backend
from rcb_action.sandbox._files import HostFiles
from rcb_action.tasks import load_task

LIMITS = Limits(
    memory_mb=256,
    processes=32,
    file_size_mb=8,
    tmp_mb=24,
    workspace_mb=24,
    workspace_files=64,
)
ATTEMPT = "a-limits"
BACKENDS = ["local", pytest.param("docker", marks=pytest.mark.docker)]


def _mounts_under(folder: str) -> list[str]:
    lines = Path("/proc/mounts").read_text().splitlines()
    return [line for line in lines if line.split()[1].startswith(folder)]


def _workspace_on_host(sandbox: Any) -> str:
    return str(getattr(sandbox, "host_dir", None) or sandbox.workspace)


def _own_cgroups(backend: Any) -> list[Path]:
    cgroups = getattr(backend, "cgroups", None)
    if cgroups is None:
        return []
    return [p for p in cgroups.leftovers() if p.name.startswith(f"rcb-{os.getpid()}-")]


def _own_containers(backend: Any) -> list[Any]:
    client = getattr(backend, "client", None)
    if client is None:
        return []
    found = client.containers.list(all=True, filters={"label": "rcb.sandbox"})
    return [c for c in found if c.labels.get("rcb.pid") == str(os.getpid())]


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A sandbox of the toy task under ``LIMITS`` with one writable attempt folder. After
    the test: no cgroup, mount, container or workspace of it is left."""
    if request.param == "docker":
        request.getfixturevalue("docker_base_image")
    backend = get_backend(request.param, LIMITS)
    box = backend.open(load_task(FIXTURE_TASKS / "toy"))
    host = _workspace_on_host(box)
    try:
        box.mkdir(ATTEMPT, writable=True)
        yield box
    finally:
        backend.close()
    assert _mounts_under(host) == []
    assert not os.path.exists(host)
    assert _own_cgroups(backend) == []
    assert _own_containers(backend) == []


def run(sandbox: Sandbox, code: str, *, timeout_s: float = 60) -> Any:
    return sandbox.exec([sandbox.python, "-c", code], timeout_s=timeout_s, cwd=ATTEMPT)


def needs_cgroups(sandbox: Any) -> None:
    if getattr(sandbox.backend, "cgroups", True) is None:
        pytest.skip("no usable cgroups here (not root): the local backend bounds each process only")


def needs_quota(sandbox: Any) -> None:
    files = sandbox.files
    if not isinstance(files, HostFiles) or files.quota is None:
        pytest.skip("attempt folders have no quota here (not root, or a remote Docker daemon)")


CHILDREN_HOLDING = """
import os, time
kids = []
for _ in range({n}):
    pid = os.fork()
    if pid == 0:
        block = b"x" * ({mb} << 20)
        time.sleep(2)
        os._exit(0)
    kids.append(pid)
print("statuses", [os.waitpid(k, 0)[1] for k in kids])
"""


def test_memory_is_bounded_for_all_processes_together(sandbox):
    needs_cgroups(sandbox)
    within = run(sandbox, CHILDREN_HOLDING.format(n=1, mb=150))
    assert within.returncode == 0 and not within.oom_killed
    assert "statuses [0]" in within.stdout
    # Four children of 100 MB each: every process is under the limit, together they are not.
    over = run(sandbox, CHILDREN_HOLDING.format(n=4, mb=100))
    assert over.oom_killed
    assert "9" in over.stdout.split("statuses", 1)[-1] or over.returncode in (137, -9)


HOLD_AFTER_FILLING = """
if {fill}:
    for folder in ("/tmp", "."):
        try:
            for i in range(40):
                open(f"{{folder}}/f{{i}}", "wb").write(b"y" * (1 << 20))
        except OSError:
            pass
hold = b"x" * (215 << 20)
print("held")
"""


def test_tmpfs_pages_count_against_the_memory_limit(sandbox):
    needs_cgroups(sandbox)
    # 215 MB fit under 256 MB; with /tmp and the attempt folder full (24 MB each) they do not.
    alone = run(sandbox, HOLD_AFTER_FILLING.format(fill=False))
    assert "held" in alone.stdout and not alone.oom_killed
    filled = run(sandbox, HOLD_AFTER_FILLING.format(fill=True))
    assert filled.oom_killed and "held" not in filled.stdout


def test_process_count_is_bounded(sandbox):
    code = (
        "import os, time\n"
        "made = 0\n"
        "try:\n"
        "    for _ in range(100):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(5)\n"
        "            os._exit(0)\n"
        "        made += 1\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno, flush=True)\n"
        "print('made', made, flush=True)\n"
        "os._exit(0)\n"
    )
    result = run(sandbox, code)
    assert "refused 11" in result.stdout  # EAGAIN
    made = int(result.stdout.split("made", 1)[1])
    assert 0 < made < LIMITS.processes


def test_a_fork_bomb_stalls_neither_the_harness_nor_the_next_exec(sandbox):
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    result = run(sandbox, bomb, timeout_s=3)
    assert result.timed_out
    assert result.duration_s < 15
    after = run(sandbox, "import os; print('alive', os.getpid() > 0)", timeout_s=30)
    assert after.returncode == 0 and "alive True" in after.stdout
    assert after.duration_s < 10


def test_tmp_is_sized(sandbox):
    code = (
        "import os\n"
        "try:\n"
        "    for i in range(10):\n"
        "        open(f'/tmp/f{i}', 'wb').write(b'x' * (4 << 20))\n"
        "except OSError as exc:\n"
        "    print('full', exc.errno, i)\n"
    )
    result = run(sandbox, code)
    assert "full 28" in result.stdout  # ENOSPC
    written = int(result.stdout.split()[-1])
    assert 4 <= written <= 6  # 24 MB: about six 4 MB files


def test_the_attempt_folder_bytes_are_bounded(sandbox):
    needs_quota(sandbox)
    code = (
        "try:\n"
        "    for i in range(10):\n"
        "        open(f'f{i}', 'wb').write(b'x' * (4 << 20))\n"
        "except OSError as exc:\n"
        "    print('full', exc.errno, i)\n"
    )
    result = run(sandbox, code)
    assert "full 28" in result.stdout
    assert 4 <= int(result.stdout.split()[-1]) <= 6


def test_the_attempt_folder_file_count_is_bounded(sandbox):
    needs_quota(sandbox)
    code = (
        "import os\n"
        "try:\n"
        "    for i in range(1000):\n"
        "        open(f'f{i}', 'w').close()\n"
        "except OSError as exc:\n"
        "    print('full', exc.errno, i)\n"
    )
    result = run(sandbox, code)
    assert "full 28" in result.stdout
    assert int(result.stdout.split()[-1]) < LIMITS.workspace_files


def test_the_quota_is_per_attempt_folder_and_goes_with_it(sandbox):
    needs_quota(sandbox)
    sandbox.mkdir("a-other", writable=True)
    fill = "for i in range(4):\n    open(f'f{i}', 'wb').write(b'x' * (5 << 20))\nprint('ok')"
    assert "ok" in run(sandbox, fill).stdout
    other = sandbox.exec([sandbox.python, "-c", fill], timeout_s=60, cwd="a-other")
    assert "ok" in other.stdout  # the first folder's 20 MB do not count here
    host = _workspace_on_host(sandbox)
    tmpfs = [m.split()[1] for m in _mounts_under(host) if m.split()[2] == "tmpfs"]
    assert sorted(tmpfs) == [f"{host}/a-limits", f"{host}/a-other"]
    sandbox.remove("a-other")
    tmpfs = [m.split()[1] for m in _mounts_under(host) if m.split()[2] == "tmpfs"]
    assert tmpfs == [f"{host}/a-limits"]
    assert not os.path.exists(os.path.join(host, "a-other"))


def test_file_size_is_bounded(sandbox):
    # Python ignores SIGXFSZ, so the write fails with EFBIG ...
    efbig = run(sandbox, "open('f', 'wb').write(b'x' * (10 << 20))")
    assert "Errno 27" in efbig.stderr
    # ... and a program that does not is killed by it.
    signalled = run(
        sandbox,
        "import signal; signal.signal(signal.SIGXFSZ, signal.SIG_DFL)\n"
        "open('g', 'wb').write(b'x' * (10 << 20))",
    )
    assert signalled.returncode in (-25, 128 + 25)


LEAVE = """
import ctypes, os, subprocess
open('/tmp/secret', 'w').write('model A')
os.makedirs('/tmp/d/e'); os.chmod('/tmp/d', 0)
open('/dev/shm/secret', 'w').write('model A') if os.path.isdir('/dev/shm') and os.access('/dev/shm', os.W_OK) else None
libc = ctypes.CDLL(None)
print('shm', libc.shmget(0x5ecc, 4096, 0o1600))
subprocess.Popen(['sleep', '300'], start_new_session=True)
print('host', os.uname().nodename)
"""

LOOK = """
import os
import subprocess
import sys
print('host', os.uname().nodename)
print('tmp', sorted(os.listdir('/tmp')))
print('shm', sorted(os.listdir('/dev/shm')) if os.path.isdir('/dev/shm') else [])
print('sysv', open('/proc/sysvipc/shm').read().splitlines()[1:])
others = []
for pid in os.listdir('/proc'):
    if pid.isdigit() and int(pid) != os.getpid():
        try:
            if os.stat(f'/proc/{pid}').st_uid == os.getuid():
                others.append(open(f'/proc/{pid}/cmdline').read())
        except OSError:
            pass
print('procs', others)
"""


def test_nothing_of_one_exec_is_left_for_the_next(sandbox):
    first = run(sandbox, LEAVE)
    assert first.returncode == 0, first.stderr
    seen = run(sandbox, LOOK)
    lines = dict(line.split(" ", 1) for line in seen.stdout.splitlines())
    # Docker: the same warm container served both.
    assert lines["host"] == first.stdout.split("host ", 1)[1].strip()
    # Locally the workspace itself lies under the host's /tmp, bound into the sandbox's.
    allowed = ["[]"]
    if sandbox.workspace.startswith("/tmp/"):
        allowed.append(repr([sandbox.workspace.split("/")[2]]))
    assert lines["tmp"] in allowed
    assert lines["shm"] == "[]"
    assert lines["sysv"] == "[]"
    assert lines["procs"] == "[]"


def test_the_harness_reads_outputs_under_a_byte_cap(sandbox):
    run(sandbox, "open('out.bin', 'wb').write(b'x' * 5000)")
    assert sandbox.read_file(f"{ATTEMPT}/out.bin", max_bytes=5000) == b"x" * 5000
    with pytest.raises(UnsafeFileError, match="over 4999"):
        sandbox.read_file(f"{ATTEMPT}/out.bin", max_bytes=4999)


@pytest.mark.docker
def test_gc_unmounts_and_removes_the_workspace_of_a_killed_run(docker_base_image):
    from rcb_action.sandbox._docker import garbage_collect

    script = (
        "import sys, time\n"
        "from rcb_action.sandbox import get_backend\n"
        "from rcb_action.tasks import load_task\n"
        f"box = get_backend('docker').open(load_task({str(FIXTURE_TASKS / 'toy')!r}))\n"
        "box.mkdir('a-1', writable=True)\n"
        "print(box.host_dir, flush=True)\n"
        "time.sleep(300)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        host = proc.stdout.readline().strip() if proc.stdout else ""
    finally:
        proc.kill()
        proc.wait()
    assert host and _mounts_under(host)  # the killed run left its mounts
    garbage_collect()
    assert _mounts_under(host) == []
    assert not os.path.exists(host)


def test_a_killed_local_run_leaves_nothing_once_gc_or_the_next_backend_runs(cli):
    """SIGKILL gives a run no chance to clean up: its workspace (with the attempt's tmpfs
    when root) stays until `rcb sandbox gc`, or the next local backend, removes it; a live
    run's workspace is never touched."""
    script = (
        "import time\n"
        "from rcb_action.sandbox import get_backend\n"
        "from rcb_action.tasks import load_task\n"
        f"box = get_backend('local').open(load_task({str(FIXTURE_TASKS / 'toy')!r}))\n"
        "box.mkdir('a-1', writable=True)\n"
        "print(box.workspace, flush=True)\n"
        "time.sleep(300)\n"
    )

    def start() -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        return proc, (proc.stdout.readline().strip() if proc.stdout else "")

    live, live_host = start()
    killed, host = start()
    try:
        killed.kill()
        killed.wait()
        assert host and os.path.isdir(host)
        assert f"-p{killed.pid}-" in os.path.basename(host)
        code, _, err = cli("sandbox", "gc")
        assert code == 0 and "removed 1 local sandbox workspace(s)" in err, err
        assert _mounts_under(host) == [] and not os.path.exists(host)
        assert os.path.isdir(live_host)  # its owner still runs
    finally:
        live.kill()
        live.wait()
    get_backend("local").close()  # a new backend sweeps what the live one left when killed
    assert _mounts_under(live_host) == [] and not os.path.exists(live_host)
