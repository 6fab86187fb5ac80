"""The local backend's limits and the parts of the Docker backend that need no daemon."""

from __future__ import annotations

import io
import os
import signal
import stat
import tarfile
import tempfile
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS, assert_attempts_are_hidden, resume_to_the_end, run_and_signal

from rcb_action.results import ResultStore
from rcb_action.sandbox import Limits, get_backend, host_gpus
from rcb_action.sandbox import _local as local_module
from rcb_action.sandbox._base import TRUNCATION_MARKER, SandboxClosedError
from rcb_action.sandbox._files import workspace_prefix
from rcb_action.sandbox._images import PipSettings, _context, env_key
from rcb_action.tasks import load_task


@pytest.fixture
def toy():
    return load_task(FIXTURE_TASKS / "toy")


def test_output_is_capped_with_a_marker(toy):
    backend = get_backend("local", Limits(output_bytes=1000))
    sandbox = backend.open(toy)
    try:
        result = sandbox.exec([sandbox.python, "-c", "print('x' * 3_000_000)"], timeout_s=30)
    finally:
        backend.close()
    assert result.output_truncated
    assert result.stdout.startswith("x" * 1000)
    assert result.stdout.endswith(TRUNCATION_MARKER.format(limit=1000))


def test_timeout_kills_the_whole_tree(toy):
    backend = get_backend("local")
    sandbox = backend.open(toy)
    code = "import os, time\nif os.fork() == 0:\n    time.sleep(60)\ntime.sleep(60)"
    try:
        result = sandbox.exec([sandbox.python, "-c", code], timeout_s=1)
    finally:
        backend.close()
    assert result.timed_out
    assert result.duration_s < 30


def test_environment_is_cleared_to_an_allow_list(toy, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-never-seen")
    monkeypatch.setenv("LANG", "C.UTF-8")
    backend = get_backend("local")
    sandbox = backend.open(toy)
    try:
        result = sandbox.exec(
            [sandbox.python, "-c", "import os; print(sorted(os.environ))"], timeout_s=30
        )
    finally:
        backend.close()
    names = eval(result.stdout)
    assert "ANTHROPIC_API_KEY" not in names
    assert "LANG" in names


def test_without_bubblewrap_limits_hold_and_a_warning_is_printed_once(toy, monkeypatch, capsys):
    monkeypatch.setattr(local_module, "_warned_unconfined", False)
    first = local_module.LocalBackend(Limits(memory_mb=512), use_bwrap=False)
    local_module.LocalBackend(use_bwrap=False)
    err = capsys.readouterr().err
    assert err.count("rcb WARNING") == 1
    assert "bubblewrap was turned off" in err
    sandbox = first.open(toy)
    try:
        result = sandbox.exec([sandbox.python, "-c", "bytearray(2 * 10**9)"], timeout_s=30)
    finally:
        first.close()
    assert "MemoryError" in result.stderr


def test_without_bubblewrap_a_timeout_still_kills_setsid_daemons(toy, tmp_path):
    backend = local_module.LocalBackend(use_bwrap=False)
    if not backend.pid_namespace:
        backend.close()
        pytest.skip("unshare cannot make a pid namespace here: only the process group is killed")
    marker = tmp_path / "daemon-was-here"
    code = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    time.sleep(3)\n"
        f"    open({str(marker)!r}, 'w').write('alive')\n"
        "    os._exit(0)\n"
        "time.sleep(60)\n"
    )
    sandbox = backend.open(toy)
    try:
        result = sandbox.exec([sandbox.python, "-c", code], timeout_s=1)
    finally:
        backend.close()
    assert result.timed_out and result.duration_s < 5
    time.sleep(4)
    assert not marker.exists(), "a setsid daemon outlived the command's timeout"


def test_a_closed_backend_makes_nothing_again(toy):
    """A test worker still running while Ctrl-C winds the run down writes into a sandbox
    the backend has already removed: the workspace must not come back (a tmpfs mounted
    on it would even outlive the run), and nothing new opens."""
    backend = get_backend("local")
    sandbox = backend.open(toy)
    sandbox.mkdir("attempt")
    workspace = Path(sandbox.workspace)
    backend.close()
    assert not workspace.exists()
    with pytest.raises(SandboxClosedError):
        sandbox.mkdir("attempt/again")
    with pytest.raises(SandboxClosedError):
        sandbox.write_files({"late/answer.py": b"x = 1\n"})
    assert not workspace.exists()
    ours = f"{workspace_prefix('local', toy.id)}*"
    before = set(Path(tempfile.gettempdir()).glob(ours))
    with pytest.raises(SandboxClosedError):
        backend.open(toy)
    assert set(Path(tempfile.gettempdir()).glob(ours)) == before


@pytest.mark.slow
def test_ctrl_c_on_the_local_backend_leaves_nothing_and_the_run_resumes(tmp_path):
    code, pid, command, out = run_and_signal(tmp_path, signal.SIGINT, "local")
    assert code == 130
    # The run's own workspaces are named for its pid; the other test process has its own.
    ours = f"{workspace_prefix('local', 'toy', pid)}*"
    left = [p for p in Path(tempfile.gettempdir()).glob(ours) if p.is_dir()]
    assert left == [], "the interrupted run left its workspaces behind"
    resume_to_the_end(command, out)


def test_a_gpu_task_gets_the_hosts_gpu_nodes_and_no_other_task_does(fixture_tasks):
    """Bubblewrap's /dev has no GPU: the local backend binds the host's device nodes
    into the sandbox of a task that uses one. A stand-in node (the null device's
    numbers) under a name of its own plays the GPU."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = Path(f"/dev/rcb-test-gpu{os.getpid()}")
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    probe = f"import os, stat; print(stat.S_ISCHR(os.stat({str(node)!r}).st_mode) if os.path.exists({str(node)!r}) else 'absent')"
    try:
        plain = load_task(fixture_tasks / "toy")
        yaml_path = fixture_tasks / "toy" / "task.yaml"
        yaml_path.write_text(
            yaml_path.read_text().replace("env: numpy\n", "env: numpy\ngpu: optional\n")
        )
        gpu_task = load_task(fixture_tasks / "toy")
        backend = local_module.LocalBackend(gpus=[str(node)])
        try:
            seen = {}
            for name, task in (("gpu", gpu_task), ("plain", plain)):
                sandbox = backend.open(task)
                result = sandbox.exec([sandbox.python, "-c", probe], timeout_s=30)
                seen[name] = result.stdout.strip()
        finally:
            backend.close()
        assert seen["gpu"] == "True"
        if backend.confined:  # unconfined, every command sees the host's /dev
            assert seen["plain"] == "absent"
    finally:
        node.unlink()


def test_docker_without_the_nvidia_runtime_skips_a_gpu_task_and_says_why(fixture_tasks, cli):
    docker_module = pytest.importorskip("rcb_action.sandbox._docker")
    try:
        backend = docker_module.DockerBackend(gpus=["/dev/nvidia0"])
    except Exception as exc:  # no daemon here: the CI run has one (CI=true fails instead)
        if os.environ.get("CI"):
            raise
        pytest.skip(f"no Docker daemon: {exc}")
    yaml_path = fixture_tasks / "toy" / "task.yaml"
    yaml_path.write_text(
        yaml_path.read_text().replace("env: numpy\n", "env: numpy\ngpu: required\n")
    )
    task = load_task(fixture_tasks / "toy")
    try:
        runtimes = backend.client.info().get("Runtimes") or {}
        if "nvidia" in runtimes:
            pytest.skip("this Docker has the NVIDIA runtime")
        assert backend.usable_gpus() == []
        assert "no NVIDIA runtime" in (backend.skip_reason(task) or "")
    finally:
        backend.close()
    code, _, err = cli("sandbox", "gpu-check", "--sandbox", "docker")
    assert code == 1
    assert ("no NVIDIA runtime" if host_gpus() else "no NVIDIA GPU on this host") in err


def test_gpu_required_without_a_gpu_is_skipped_not_failed(fixture_tasks, cli):
    yaml_path = fixture_tasks / "toy" / "task.yaml"
    yaml_path.write_text(
        yaml_path.read_text().replace("env: numpy\n", "env: numpy\ngpu: required\n")
    )
    task = load_task(fixture_tasks / "toy")
    assert local_module.LocalBackend(gpus=[]).skip_reason(task) is not None
    assert local_module.LocalBackend(gpus=["/dev/nvidia0"]).skip_reason(task) is None
    out = fixture_tasks.parent / "out"
    code, stdout, _ = cli(
        "evaluate", "--tasks-dir", fixture_tasks, "--tasks", "toy", "--out", out, "--no-progress"
    )
    assert code == 0
    records = ResultStore(out).records()
    assert records and all(r.status == "skipped" for r in records)
    assert "requires a GPU" in records[0].message
    assert "attempt(s) not run: skipped: the task requires a GPU" in stdout
    # A rerun on the same machine has nothing to do and records nothing twice.
    code, _, err = cli(
        "evaluate", "--tasks-dir", fixture_tasks, "--tasks", "toy", "--out", out, "--no-progress"
    )
    assert code == 0 and "nothing to do" in err
    assert len(ResultStore(out).records()) == len(records)


def test_gpu_device_requests_with_a_fake_device_list(toy, fixture_tasks):
    """Not run on a GPU here: the request docker-py would send is checked instead."""
    from rcb_action.sandbox._docker import gpu_device_requests

    assert gpu_device_requests(toy, ["/dev/nvidia0"]) == []  # gpu: none
    yaml_path = fixture_tasks / "toy" / "task.yaml"
    yaml_path.write_text(
        yaml_path.read_text().replace("env: numpy\n", "env: numpy\ngpu: optional\n")
    )
    wants = load_task(fixture_tasks / "toy")
    assert gpu_device_requests(wants, []) == []
    (request,) = gpu_device_requests(wants, ["/dev/nvidia0", "/dev/nvidia1"])
    assert request["Count"] == -1
    assert request["Capabilities"] == [["gpu"]]


def test_build_context_passes_pip_settings(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "numpy-2.2.6-cp311-none-any.whl").write_bytes(b"numpy wheel")
    (wheels / "torch-2.13.0+cpu-cp311-none-any.whl").write_bytes(b"torch wheel")
    cert = tmp_path / "ca.crt"
    cert.write_text("-----BEGIN CERTIFICATE-----\n")
    settings = PipSettings(
        index_url="https://mirror.example/simple",
        extra_index_urls=["https://extra.example/simple"],
        cert=cert,
        find_links=[wheels],
    )
    data, _ = _context("numpy==2.2.6\npytest==8.4.2\n", "rcb-base:test", settings)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        names = tar.getnames()
        dockerfile = tar.extractfile("Dockerfile").read().decode()
    assert "wheels/numpy-2.2.6-cp311-none-any.whl" in names
    assert not any("torch" in n for n in names)  # only the wheels the requirements name
    assert "rcb-ca.crt" in names
    assert "FROM rcb-base:test" in dockerfile
    for flag in (
        "--index-url https://mirror.example/simple",
        "--extra-index-url https://extra.example/simple",
        "--cert /tmp/rcb-build/rcb-ca.crt",
        "--find-links /tmp/rcb-build/wheels",
    ):
        assert flag in dockerfile


def test_env_key_follows_requirements_and_base(tmp_path):
    env = tmp_path / "numpy"
    env.mkdir()
    (env / "requirements.txt").write_text("numpy==2.2.6\n")
    key = env_key(env, salt="base-a")
    assert key.startswith("numpy-")
    assert env_key(env, salt="base-a") == key
    assert env_key(env, salt="base-b") != key
    (env / "requirements.txt").write_text("numpy==2.2.5\n")
    assert env_key(env, salt="base-a") != key


def test_venvs_are_cached(toy):
    from rcb_action.sandbox import build_venv

    first = build_venv(toy.env_dir)
    marker = first / ".rcb-complete"
    stamp = marker.stat().st_mtime_ns
    assert build_venv(toy.env_dir) == first
    assert marker.stat().st_mtime_ns == stamp
    assert Path(first, "bin", "python").exists()


def test_a_sandbox_that_never_starts_pytest_is_a_harness_failure(toy):
    """Without the plugin's start proof, a missing verdict is not blamed on the model."""
    from rcb_action.sandbox import ExecResult
    from rcb_action.scoring import SandboxStartError, run_tests

    backend = get_backend("local")
    sandbox = backend.open(toy)

    def broken_exec(argv, **kwargs):
        return ExecResult(
            returncode=1,
            stdout="",
            stderr="setpriv: setresuid failed: Resource temporarily unavailable",
            duration_s=0.01,
        )

    sandbox.exec = broken_exec
    try:
        with pytest.raises(SandboxStartError, match="did not start pytest"):
            run_tests(sandbox, toy, toy.tests_for("norm"))
    finally:
        backend.close()


def test_an_attempt_cannot_list_the_workspace(toy):
    backend = get_backend("local")
    if not getattr(backend, "confined", False):
        backend.close()
        pytest.skip("as root without bubblewrap's user drop, every folder is listable")
    assert_attempts_are_hidden(backend, toy)


def test_concurrent_execs_get_distinct_uids():
    backend = local_module.LocalBackend()
    taken = [backend.take_uid() for _ in range(3)]
    assert len(set(taken)) == 3 and all(uid >= 200_000 for uid in taken)
    for uid in taken:
        backend.give_uid(uid)
