"""The Docker backend against a real daemon: images, limits, cleanup on every exit path."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import tempfile

import pytest
from conftest import (
    FIXTURE_TASKS,
    assert_attempts_are_hidden,
    fenced,
    resume_to_the_end,
    run_and_signal,
    write_replay,
)

from rcb_action.errors import RcbError
from rcb_action.sandbox import EnvironmentBuildError, Limits, get_backend
from rcb_action.sandbox._base import TRUNCATION_MARKER
from rcb_action.sandbox._docker import LABEL, docker_client
from rcb_action.sandbox._files import workspace_prefix
from rcb_action.sandbox._images import ensure_image
from rcb_action.tasks import load_task

pytestmark = pytest.mark.docker


@pytest.fixture
def toy(docker_base_image):
    return load_task(FIXTURE_TASKS / "toy")


def _ours(client, pid: int) -> list:
    return client.containers.list(all=True, filters={"label": [LABEL, f"rcb.pid={pid}"]})


def test_second_build_builds_nothing(docker_client, toy):
    tag = ensure_image(docker_client, toy.env_dir)
    before = docker_client.images.get(tag).id
    assert tag.startswith("rcb-env:numpy-")
    assert ensure_image(docker_client, toy.env_dir) == tag
    assert docker_client.images.get(tag).id == before


def test_failed_build_is_one_line_naming_env_and_log(docker_client, tmp_path, docker_base_image):
    env = tmp_path / "_envs" / "broken"
    env.mkdir(parents=True)
    (env / "requirements.txt").write_text("rcb-no-such-package-for-tests==0.0.1\n")
    with pytest.raises(EnvironmentBuildError) as info:
        ensure_image(docker_client, env)
    message = str(info.value)
    assert "\n" not in message
    assert "environment 'broken' failed to build" in message
    log = message.rsplit("see ", 1)[1]
    assert os.path.isfile(log)
    with open(log) as handle:
        assert "rcb-no-such-package-for-tests" in handle.read()


def test_container_limits_and_isolation(docker_client, toy):
    backend = get_backend("docker", Limits(output_bytes=1000))
    sandbox = backend.open(toy)
    try:
        probe = (
            "import os, socket\n"
            "print(os.getuid())\n"
            "try:\n    open('/usr/evil', 'w')\nexcept OSError as e:\n    print('ro', e.errno)\n"
            "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\nexcept OSError as e:\n    print('net', e.errno)\n"
        )
        result = sandbox.exec([sandbox.python, "-c", probe], timeout_s=60)
        lines = result.stdout.split()
        assert lines[0] == "65534"  # not root
        assert "ro" in lines and "net" in lines
        flood = sandbox.exec([sandbox.python, "-c", "print('y' * 3_000_000)"], timeout_s=60)
        assert flood.output_truncated
        assert flood.stdout.endswith(TRUNCATION_MARKER.format(limit=1000))
        slow = sandbox.exec([sandbox.python, "-c", "import time; time.sleep(60)"], timeout_s=2)
        assert slow.timed_out
        container = sandbox.helper
        container.reload()
        config = container.attrs["HostConfig"]
        assert config["NetworkMode"] == "none"
        assert config["ReadonlyRootfs"] is True
        assert config["PidsLimit"] == Limits().processes
        assert config["Memory"] == Limits().memory_mb * 1024 * 1024
        assert config["CapDrop"] == ["ALL"]
        assert container.labels[LABEL] == "1"
    finally:
        backend.close()
    assert _ours(docker_client, os.getpid()) == []


def test_an_attempt_cannot_list_the_workspace(docker_client, toy):
    assert_attempts_are_hidden(get_backend("docker"), toy)


def test_docker_and_local_give_the_same_verdicts(tmp_path, cli, docker_base_image):
    replay = write_replay(
        tmp_path / "mixed.jsonl",
        [
            {"task": "toy", "snippet": "scale", "completion": fenced("y = a * x")},
            {"task": "toy", "snippet": "shift", "completion": fenced("y = y - b")},
            {"task": "toy", "snippet": "norm", "completion": fenced("return float(len(x))")},
            {"task": "guard", "snippet": "setup", "completion": fenced("SCALE = 3")},
        ],
    )
    verdicts = {}
    for sandbox in ("local", "docker"):
        out = tmp_path / sandbox
        code, _, _ = cli(
            "evaluate", "--model", "reference", "--model", "null", "--model", f"replay:{replay}",
            "--tasks-dir", FIXTURE_TASKS, "--sandbox", sandbox, "--out", out, "--no-progress",
        )  # fmt: skip
        assert code == 0
        from rcb_action.results import ResultStore

        verdicts[sandbox] = sorted(
            (r.key, r.status, r.failure_class) for r in ResultStore(out).records()
        )
    assert verdicts["local"] == verdicts["docker"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signals_leave_no_containers_and_a_run_that_resumes(
    docker_client, tmp_path, sig, docker_base_image
):
    code, pid, command, out = run_and_signal(tmp_path, sig, "docker")
    assert code == 130
    assert _ours(docker_client, pid) == []
    resume_to_the_end(command, out)


def test_exception_leaves_no_containers(docker_client, toy, tmp_path):
    from rcb_action.models import Completion, Model
    from rcb_action.runner import EvalConfig, evaluate

    class Exploding(Model):
        name = "exploding"
        calls = 0

        def complete(self, request):
            Exploding.calls += 1
            if Exploding.calls == 3:
                raise RuntimeError("a bug in a model adapter")
            return Completion(text=fenced("y = a * x"))

    config = EvalConfig(
        models=["exploding"], out=tmp_path / "out", tasks_dir=FIXTURE_TASKS, tasks="toy",
        sandbox="docker", workers=1, progress=False,
    )  # fmt: skip
    with pytest.raises(RuntimeError, match="a bug in a model adapter"):
        evaluate(config, model_objects=[Exploding()])
    assert _ours(docker_client, os.getpid()) == []


def test_a_container_that_fails_to_start_leaves_nothing_behind(docker_client, toy):
    """The daemon creates a container, then refuses to start it (here: a GPU request on a
    host without one, from a backend told the daemon has the NVIDIA runtime). Neither
    that container nor the workspace folder and its mounts stay."""
    from rcb_action.sandbox._docker import DockerBackend

    toy.config = toy.config.model_copy(update={"gpu": "optional"})
    backend = DockerBackend(gpus=["0"])
    backend.nvidia_runtime = lambda: True  # type: ignore[method-assign]
    before = set(os.listdir(tempfile.gettempdir()))
    try:
        with pytest.raises(Exception, match="device driver"):
            backend.open(toy)
        assert _ours(docker_client, os.getpid()) == []
        left = set(os.listdir(tempfile.gettempdir())) - before
        # Ours only: the other test process may have a workspace open just now.
        ours = workspace_prefix("docker", toy.id)
        assert [name for name in left if name.startswith(ours)] == []
        with open("/proc/mounts") as mounts:
            assert ours not in mounts.read()
    finally:
        backend.close()


def test_a_removal_the_daemon_times_out_is_asked_again(docker_client, docker_base_image, capsys):
    """A busy daemon times the first removal out: the container is still removed, and
    one that never goes is named for ``rcb sandbox gc``."""
    import requests

    from rcb_action.sandbox._docker import remove_container

    class Flaky:
        """The real API, but the first ``fails`` removals time out on the client."""

        def __init__(self, fails: int) -> None:
            self.fails = fails

        def remove_container(self, ref, **kwargs):
            if self.fails:
                self.fails -= 1
                raise requests.exceptions.ReadTimeout("read timed out")
            return docker_client.api.remove_container(ref, **kwargs)

        def inspect_container(self, ref):
            return docker_client.api.inspect_container(ref)

    class Client:
        def __init__(self, fails: int) -> None:
            self.api = Flaky(fails)

    labels = {LABEL: "1", "rcb.pid": str(os.getpid()), "rcb.host": socket.gethostname()}
    container = docker_client.containers.create(docker_base_image, ["sleep", "1"], labels=labels)
    try:
        assert remove_container(Client(fails=2), container.id, tries=3)
        assert _ours(docker_client, os.getpid()) == []
        stuck = docker_client.containers.create(docker_base_image, ["sleep", "1"], labels=labels)
        assert not remove_container(Client(fails=9), stuck.id, tries=2)
        assert f"could not remove container {stuck.id[:12]}" in capsys.readouterr().err
    finally:
        for leftover in _ours(docker_client, os.getpid()):
            leftover.remove(force=True)


def test_gc_removes_containers_whose_run_is_gone(docker_client, docker_base_image, cli):
    host = socket.gethostname()
    dead = docker_client.containers.create(
        docker_base_image,
        ["sleep", "1"],
        labels={LABEL: "1", "rcb.pid": "999999999", "rcb.host": host},
    )
    alive = docker_client.containers.create(
        docker_base_image,
        ["sleep", "1"],
        labels={LABEL: "1", "rcb.pid": str(os.getpid()), "rcb.host": host},
    )
    try:
        code, _, err = cli("sandbox", "gc")
        assert code == 0
        remaining = {
            c.id for c in docker_client.containers.list(all=True, filters={"label": LABEL})
        }
        assert dead.id not in remaining
        assert alive.id in remaining
        assert "removed" in err
    finally:
        for container in (dead, alive):
            with contextlib.suppress(Exception):
                container.remove(force=True)


def test_missing_daemon_is_one_line(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(RcbError, match="no Docker daemon answers"):
        docker_client()
