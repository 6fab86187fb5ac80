"""The Docker backend (docker-py): warm containers per task, an exec per snippet.

Each container runs ``sleep infinity`` under Docker's init (which reaps orphans)
with no network, a read-only root, memory, CPU, process and file-size limits, all
capabilities dropped and ``no-new-privileges``; its only writable places are a
sized ``/tmp``, Docker's 64 MB ``/dev/shm`` and the workspace at ``/work``. The
memory limit holds everything of the container together, tmpfs pages included.
Code runs as the unprivileged user 65534, so the files the harness writes
read-only (root-owned) cannot be edited or deleted.

A container serves one exec at a time; a task gets as many warm containers as it
has attempts in flight. After every exec, before the container serves again, a
reset kills every process of that user (``kill -9 -1``), so no daemon
outlives its test, and empties ``/tmp``, ``/dev/shm``, ``/dev/mqueue`` and System V
IPC, so no exec sees what an earlier one left; a container whose reset fails is
removed, never reused.

With a daemon on this host and the harness as root, each writable folder of the
workspace is a sized tmpfs mounted on the host (see ``_files``); the workspace is a
shared mount bound with ``rslave`` propagation, so those mounts, made after the
container started, are seen inside it.

Containers and volumes carry the label ``rcb.sandbox`` and the owner's pid and
host name; they are removed on every exit path, and ``rcb sandbox gc`` removes
any whose owner is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import io
import os
import shutil
import socket
import struct
import sys
import tarfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from rcb_action.errors import RcbError
from rcb_action.sandbox._base import (
    MAX_READ_BYTES,
    TRUNCATION_MARKER,
    ExecResult,
    Limits,
    Sandbox,
    SandboxBackend,
    UnsafeFileError,
    host_gpus,
)
from rcb_action.sandbox._cgroups import memory_folders, oom_kills
from rcb_action.sandbox._files import (
    DelegatedFiles,
    HostFiles,
    collect_workspaces,
    mount_tmpfs,
    new_workspace,
    remove_workspace,
    unmount,
    workspace_quota,
)
from rcb_action.sandbox._images import VENV, base_image_id, ensure_image
from rcb_action.tasks import Task

LABEL = "rcb.sandbox"
SANDBOX_USER = "65534:65534"
WORKSPACE = "/work"
# A reset that takes longer (its own deadline for survivors is 20 s) discards the container.
RESET_TIMEOUT_S = 60
# kill(-1) signals every process the caller may signal, except itself.
_KILL_ALL = "import os, signal; os.kill(-1, signal.SIGKILL)"
# Run as the sandbox user after every exec (root in the container has no capabilities,
# and a privileged exec cannot start under ``no-new-privileges``): every other process
# of that user dies (kill(-1) spares only the caller) and is reaped by the init, then
# every place that user can write outside the workspace is emptied (all it holds there
# is its own). Exits non-zero when anything is left; the container is then discarded.
_RESET = r"""
import ctypes, os, shutil, signal, stat, sys, time
me, uid = os.getpid(), os.getuid()
def others():
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != me:
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(name)
            except OSError:
                pass
    return found
deadline = time.monotonic() + 20
while True:
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if not others():
        break
    if time.monotonic() > deadline:
        sys.exit("processes of the sandbox user survived the reset")
    time.sleep(0.01)
def writable(path):
    # The user's own folders may have been made unreadable: give them back first.
    for top, dirs, _ in os.walk(path, onerror=lambda e: None):
        for name in dirs:
            full = os.path.join(top, name)
            if not os.path.islink(full):
                os.chmod(full, stat.S_IRWXU)
left = []
for top in ("/tmp", "/dev/shm", "/dev/mqueue"):
    if not os.path.isdir(top):
        continue
    for name in os.listdir(top):
        path = os.path.join(top, name)
        if os.path.isdir(path) and not os.path.islink(path):
            try:
                os.chmod(path, stat.S_IRWXU)
                writable(path)
            except OSError:
                pass
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    left += [os.path.join(top, name) for name in os.listdir(top)]
libc = ctypes.CDLL(None, use_errno=True)
for kind in ("shm", "msg", "sem"):
    try:
        with open(f"/proc/sysvipc/{kind}") as table:
            rows = table.read().splitlines()[1:]
    except OSError:
        continue
    for row in rows:
        ident = int(row.split()[1])
        if kind == "sem":
            libc.semctl(ident, 0, 0)
        else:
            getattr(libc, kind + "ctl")(ident, 0, None)
    with open(f"/proc/sysvipc/{kind}") as table:
        left += [f"sysv {kind} {row.split()[1]}" for row in table.read().splitlines()[1:]]
if left:
    sys.exit("left after the reset: " + " ".join(left[:5]))
"""


_noted: set[str] = set()


def _note_once(text: str) -> None:
    if text not in _noted:
        _noted.add(text)
        print(text, file=sys.stderr, flush=True)


def docker_client() -> Any:
    """A docker-py client for the daemon in the environment (DOCKER_HOST or the socket).

    Raises:
        RcbError: no daemon answers.
    """
    import docker
    import docker.errors

    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except (docker.errors.DockerException, OSError) as exc:
        raise RcbError(
            f"--sandbox docker: no Docker daemon answers ({exc.__class__.__name__}); "
            "start dockerd or use --sandbox local"
        ) from None
    return client


def gpu_device_requests(task: Task, gpus: list[str]) -> list[Any]:
    """Device requests for ``task``: all GPUs when it uses one and the host has them."""
    if task.config.gpu == "none" or not gpus:
        return []
    import docker.types

    return [docker.types.DeviceRequest(count=-1, capabilities=[["gpu"]])]


def _tar(files: dict[str, bytes], dirs: dict[str, int], mode: int) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, mode in sorted(dirs.items()):
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = mode
            tar.addfile(info)
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class _ArchiveFiles:
    """Workspace files through Docker's archive API, for daemons on another host."""

    def __init__(self, sandbox: DockerSandbox) -> None:
        self.sandbox = sandbox
        self._dirs: set[str] = set()

    def write_files(self, files: dict[str, bytes], *, writable: bool = True) -> None:
        # Parent folders the harness did not make itself are root's, 0755; folders
        # made with mkdir keep their mode (a tar entry would reset it).
        dirs: dict[str, int] = {}
        for rel in files:
            parent = Path(rel).parent
            while str(parent) not in (".", "") and str(parent) not in self._dirs:
                dirs.setdefault(str(parent), 0o755)
                parent = parent.parent
        self.sandbox.helper.put_archive(WORKSPACE, _tar(files, dirs, 0o666 if writable else 0o644))

    def mkdir(self, rel: str, *, writable: bool = True) -> None:
        self.sandbox.helper.put_archive(
            WORKSPACE, _tar({}, {rel: 0o1777 if writable else 0o755}, 0o644)
        )
        self._dirs.add(rel)

    def read_file(self, rel: str, *, max_bytes: int = MAX_READ_BYTES) -> bytes:
        import docker.errors

        try:
            stream, info = self.sandbox.helper.get_archive(f"{WORKSPACE}/{rel}")
        except docker.errors.NotFound:
            raise FileNotFoundError(rel) from None
        # The archive's header says the size: a huge file is refused unread.
        if int(info.get("size", 0)) > max_bytes:
            raise UnsafeFileError(f"{rel} holds {info['size']} bytes, over {max_bytes}")
        buffer = bytearray()
        for chunk in stream:
            buffer += chunk
            if len(buffer) > max_bytes + (1 << 20):  # the file plus tar headers
                raise UnsafeFileError(f"{rel} grew past {max_bytes} bytes while read")
        with tarfile.open(fileobj=io.BytesIO(bytes(buffer))) as tar:
            member = tar.next()
            if member is None:
                raise FileNotFoundError(rel)
            if not member.isfile():
                raise UnsafeFileError(f"{rel} is not a plain file")
            if member.size > max_bytes:
                raise UnsafeFileError(f"{rel} holds {member.size} bytes, over {max_bytes}")
            handle = tar.extractfile(member)
            return handle.read() if handle else b""

    def remove(self, rel: str) -> None:
        # A privileged exec: root in the container has no capabilities otherwise,
        # and could not enter folders the sandbox user made private.
        self.sandbox.helper.exec_run(
            ["rm", "-rf", "--", f"{WORKSPACE}/{rel}"], user="0:0", privileged=True
        )
        self._dirs.discard(rel)


class DockerSandbox(DelegatedFiles, Sandbox):
    """A pool of warm containers for one task sharing one workspace.

    With a daemon on this host the workspace is a bind-mounted folder (file
    operations cost no API call); with a remote daemon it is a volume reached
    through the archive API.
    """

    def __init__(
        self,
        backend: DockerBackend,
        task: Task,
        image: str,
        *,
        python: str | None = None,
        mounts: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.backend = backend
        self.task = task
        self.image = image
        self.python = python or f"{VENV}/bin/python"
        self.workspace = WORKSPACE
        self.env = dict(env or {})
        self._idle: list[Any] = []
        self._cleaning = 0
        self._containers: list[Any] = []
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        # Container id -> its memory cgroup folder on this host (to count OOM kills).
        self._memory_groups: dict[str, list[Path]] = {}
        self.volume: Any = None
        self.host_dir: Path | None = None
        if backend.local_daemon:
            self.host_dir = new_workspace("docker", task.id)
            # Not listable by the sandbox user: attempts sharing it cannot find each other.
            self.host_dir.chmod(0o711)
            host_files = HostFiles(self.host_dir, workspace_quota(backend.limits))
            self.files: HostFiles | _ArchiveFiles = host_files
            mode = "rw"
            if host_files.quota is not None:
                try:
                    host_files.share()
                    mode = "rw,rslave"
                except OSError:
                    host_files.quota = None
            self._mount = {str(self.host_dir): {"bind": WORKSPACE, "mode": mode}}
        else:
            self.volume = backend.client.volumes.create(labels=backend.labels())
            self.files = _ArchiveFiles(self)
            self._mount = {self.volume.name: {"bind": WORKSPACE, "mode": "rw"}}
        for source, target in (mounts or {}).items():
            self._mount[source] = {"bind": target, "mode": "ro"}
        try:
            self.helper = self._start()
            if isinstance(self.files, HostFiles) and self.files.quota is not None:
                self._keep_quota_if_seen(self.files)
            if self.volume is not None:
                self.helper.exec_run(["chmod", "711", WORKSPACE], user="0:0", privileged=True)
        except BaseException:
            # Not yet tracked by the backend: nobody else would remove what was started.
            self.cleanup()
            raise
        self._idle.append(self.helper)

    def _start(self) -> Any:
        limits = self.backend.limits
        name = f"rcb-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            container = self._run(name, limits)
        except BaseException:
            # The daemon may have created it even though the call failed (a client
            # timeout, a failed start): remove it by the name chosen here.
            remove_container(self.backend.client, name)
            raise
        with self._lock:
            self._containers.append(container)
        if self.backend.local_daemon:
            with contextlib.suppress(Exception):
                container.reload()
                folders = memory_folders(int(container.attrs["State"]["Pid"]))
                with self._lock:
                    self._memory_groups[container.id] = folders
        return container

    def _run(self, name: str, limits: Limits) -> Any:
        return self.backend.client.containers.run(
            self.image,
            ["sleep", "infinity"],
            detach=True,
            # An init as PID 1 reaps the orphans the reset kills: zombies would hold pids.
            init=True,
            network_mode="none",
            read_only=True,
            tmpfs={"/tmp": f"rw,nosuid,nodev,size={limits.tmp_mb}m,mode=1777"},
            volumes=self._mount,
            mem_limit=f"{limits.memory_mb}m",
            memswap_limit=f"{limits.memory_mb}m",
            nano_cpus=int(limits.cpus * 1e9),
            pids_limit=limits.processes,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            ulimits=[
                self.backend.ulimit("nofile", limits.open_files),
                self.backend.ulimit("fsize", limits.file_size_mb << 20),
                self.backend.ulimit("core", 0),
            ],
            device_requests=gpu_device_requests(self.task, self.backend.usable_gpus()),
            labels=self.backend.labels(),
            environment={"HOME": "/tmp"},
            name=name,
        )

    def _keep_quota_if_seen(self, files: HostFiles) -> None:
        """Turn the quota off unless the helper container sees a tmpfs mounted under the
        workspace on this host (it would otherwise see the empty folder beneath, not the
        attempt's files): a daemon in another mount namespace does not."""
        if not self._sees_host_mounts(self.helper):
            _note_once(
                "rcb: the Docker daemon does not see mounts made by rcb (another mount "
                "namespace?): attempt folders get no size or file-count quota"
            )
            files.quota = None

    def _sees_host_mounts(self, container: Any) -> bool:
        assert self.host_dir is not None
        probe = self.host_dir / ".rcb-mount-probe"
        try:
            pid = int(container.attrs["State"]["Pid"])
            probe.mkdir()
            mount_tmpfs(probe, size_bytes=4096, inodes=4)
        except (OSError, KeyError, TypeError, ValueError):
            return False
        try:
            inside = os.stat(f"/proc/{pid}/root{WORKSPACE}/{probe.name}")
            return inside.st_dev == os.stat(probe).st_dev
        except OSError:
            return False
        finally:
            unmount(probe)
            with contextlib.suppress(OSError):
                probe.rmdir()

    def _checkout(self) -> Any:
        """An idle container; waits for one being cleaned before starting another."""
        with self._ready:
            while not self._idle and self._cleaning:
                self._ready.wait()
            if self._idle:
                return self._idle.pop()
        return self._start()

    def _clean_and_return(self, container: Any) -> None:
        clean = False
        try:
            clean = self._reset(container)
        finally:
            with self._ready:
                self._cleaning -= 1
                if clean:
                    self._idle.append(container)
                else:
                    with contextlib.suppress(ValueError):
                        self._containers.remove(container)
                self._ready.notify()
            if not clean:
                self._memory_groups.pop(container.id, None)
                remove_container(self.backend.client, container.id)

    def _reset(self, container: Any) -> bool:
        """Kill the sandbox user's processes and empty ``/tmp`` and the other places that
        user can write outside the workspace. False when that failed, timed out, or the
        container is gone: it must not serve again."""
        code = self._detached(container, [self.python, "-I", "-S", "-c", _RESET], RESET_TIMEOUT_S)
        return code == 0

    def _detached(self, container: Any, argv: list[str], timeout_s: float) -> int | None:
        """Run ``argv`` as the sandbox user, detached, and poll until it ends; its exit
        status, or None when it could not run or outlived ``timeout_s``. (Reading an
        exec's stream can hang when the processes it races with are being killed.)"""
        api = self.backend.client.api
        try:
            exec_id = api.exec_create(container.id, argv, user=SANDBOX_USER)["Id"]
            api.exec_start(exec_id, detach=True)
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                info = api.exec_inspect(exec_id)
                if not info.get("Running", True):
                    code = info.get("ExitCode")
                    return int(code) if code is not None else None
                time.sleep(0.01)
        except Exception:
            return None
        return None

    # exec
    def exec(
        self,
        argv: list[str],
        *,
        timeout_s: float,
        cwd: str = ".",
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> ExecResult:
        container = self._checkout()
        groups = self._memory_groups.get(container.id, [])
        kills_before = oom_kills(groups)
        try:
            result = self._exec_in(container, argv, timeout_s, cwd, env or {}, stdin)
            if groups:
                # The kernel's count of OOM kills in the container, which serves this
                # exec alone: exact, where the exit status is only a guess.
                oom = oom_kills(groups) > kills_before
                result = dataclasses.replace(result, oom_killed=oom)
            return result
        finally:
            # Every process of the sandbox user is killed before the container serves
            # again; the result goes back meanwhile (a leftover daemon cannot forge
            # the signed verdict, and it dies before the next exec here).
            with self._ready:
                self._cleaning += 1
            threading.Thread(target=self._clean_and_return, args=(container,), daemon=True).start()

    def _exec_in(
        self,
        container: Any,
        argv: list[str],
        timeout_s: float,
        cwd: str,
        env: dict[str, str],
        stdin: bytes | None,
    ) -> ExecResult:
        api = self.backend.client.api
        environment = {
            "HOME": "/tmp",
            "PATH": f"{VENV}/bin:/usr/local/bin:/usr/bin:/bin",
            **self.env,
            **env,
        }
        exec_id = api.exec_create(
            container.id,
            argv,
            stdin=stdin is not None,
            stdout=True,
            stderr=True,
            user=SANDBOX_USER,
            workdir=f"{WORKSPACE}/{cwd}".rstrip("/."),
            environment=environment,
        )["Id"]
        started = time.monotonic()
        sock = api.exec_start(exec_id, socket=True)
        raw = getattr(sock, "_sock", sock)
        if stdin is not None:
            raw.sendall(stdin)
        limit = self.backend.limits.output_bytes
        buffers = {1: bytearray(), 2: bytearray()}
        truncated = timed_out = False
        deadline = started + timeout_s
        header = b""
        raw.settimeout(0.25)
        pending = 0
        stream = 1
        while True:
            if time.monotonic() > deadline:
                timed_out = True
                break
            try:
                chunk = raw.recv(1 << 20)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            if len(buffers[1]) >= limit and len(buffers[2]) >= limit:
                # Both kept in full: the rest is read and dropped, as the local backend
                # does; output alone is no reason to stop a run (its timeout is).
                truncated = True
                continue
            # Docker multiplexes stdout and stderr in frames with an 8-byte header.
            while chunk:
                if pending == 0:
                    need = 8 - len(header)
                    header += chunk[:need]
                    chunk = chunk[need:]
                    if len(header) < 8:
                        break
                    stream, pending = header[0], struct.unpack(">I", header[4:])[0]
                    header = b""
                    continue
                piece, chunk = chunk[:pending], chunk[pending:]
                pending -= len(piece)
                target = buffers.get(stream, buffers[2])
                room = limit - len(target)
                if room > 0:
                    target += piece[:room]
                if len(piece) > room:
                    truncated = True
        # Shut the connection itself down (close alone leaves it open while docker-py holds
        # a reference): else, after a timeout, the daemon blocks writing the rest of the
        # output to it, and the container's next execs hang with it.
        with contextlib.suppress(OSError):
            raw.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            raw.close()
        if timed_out:
            self._kill_user_processes(container)
        code = None
        for _ in range(100):
            info = api.exec_inspect(exec_id)
            if not info.get("Running"):
                code = info.get("ExitCode")
                break
            time.sleep(0.02)

        def text(buf: bytearray) -> str:
            out = buf.decode("utf-8", "replace")
            return (
                out + TRUNCATION_MARKER.format(limit=limit)
                if len(buf) >= limit and truncated
                else out
            )

        return ExecResult(
            returncode=code,
            stdout=text(buffers[1]),
            stderr=text(buffers[2]),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            output_truncated=truncated,
            oom_killed=code == 137 and not timed_out,
        )

    def _kill_user_processes(self, container: Any) -> None:
        """Every process of the sandbox user goes: daemons, forks, a runaway test."""
        self._detached(container, [self.python, "-c", _KILL_ALL], 30)

    def cleanup(self) -> None:
        with self._lock:
            containers, self._containers = self._containers, []
        for container in containers:
            remove_container(self.backend.client, container.id)
        if self.volume is not None:
            with contextlib.suppress(Exception):
                self.volume.remove(force=True)
        if isinstance(self.files, HostFiles):
            self.files.close()
        elif self.host_dir is not None:
            shutil.rmtree(self.host_dir, ignore_errors=True)


class DockerBackend(SandboxBackend):
    """Sandboxes in Docker containers built from per-environment images."""

    name = "docker"

    def __init__(self, limits: Limits | None = None, *, gpus: list[str] | None = None) -> None:
        super().__init__()
        self.limits = limits or Limits()
        self.client = docker_client()
        self.gpus = host_gpus() if gpus is None else gpus
        # A daemon behind the local socket shares this file system: bind-mount workspaces.
        self.local_daemon = str(self.client.api.base_url).startswith("http+docker://local")
        self._images: dict[Path, str] = {}
        self._image_lock = threading.Lock()
        self._nvidia: bool | None = None
        atexit.register(self.close)

    def nvidia_runtime(self) -> bool:
        """Whether the daemon can hand GPUs to a container (the NVIDIA container
        runtime is registered: ``nvidia-container-toolkit``)."""
        if self._nvidia is None:
            try:
                runtimes = self.client.info().get("Runtimes") or {}
            except Exception:  # the daemon's answer is only a hint here
                runtimes = {}
            self._nvidia = "nvidia" in runtimes
        return self._nvidia

    def usable_gpus(self) -> list[str]:
        """The host's GPUs when Docker can pass them through, else none (a GPU request
        the daemon cannot serve would fail every container of the task)."""
        return self.gpus if self.gpus and self.nvidia_runtime() else []

    def skip_reason(self, task: Task) -> str | None:
        reason = super().skip_reason(task)
        if reason is None and task.config.gpu == "required" and not self.usable_gpus():
            return (
                "skipped: the task requires a GPU and Docker here has no NVIDIA runtime "
                "(install nvidia-container-toolkit)"
            )
        return reason

    def labels(self) -> dict[str, str]:
        return {LABEL: "1", "rcb.pid": str(os.getpid()), "rcb.host": socket.gethostname()}

    @staticmethod
    def ulimit(name: str, value: int) -> Any:
        import docker.types

        return docker.types.Ulimit(name=name, soft=value, hard=value)

    def prepare(self, task: Task) -> None:
        with self._image_lock:
            if task.env_dir not in self._images:
                self._images[task.env_dir] = ensure_image(self.client, task.env_dir)

    def open(self, task: Task) -> DockerSandbox:
        self.prepare(task)
        sandbox = DockerSandbox(self, task, self._images[task.env_dir])
        return self.track(sandbox)

    def open_clean(
        self,
        task: Task,
        *,
        mounts: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
    ) -> DockerSandbox:
        if mounts and not self.local_daemon:
            raise RcbError(
                "--sandbox docker: mounting a host folder needs a Docker daemon on this host "
                "(DOCKER_HOST points elsewhere)"
            )
        with self._image_lock:
            image = base_image_id(self.client)
        sandbox = DockerSandbox(self, task, image, python="python3", mounts=mounts, env=env)
        return self.track(sandbox)


def remove_container(client: Any, ref: str, *, tries: int = 5) -> bool:
    """Force-remove a container and make sure it is gone; True when it is (or never
    existed). A busy daemon can time a removal out or answer that one is already in
    progress: wait and ask again rather than leave it behind. What still stands after
    ``tries`` is named on stderr, for ``rcb sandbox gc``."""
    import docker.errors

    for attempt in range(tries):
        try:
            client.api.remove_container(ref, force=True)
        except docker.errors.NotFound:
            return True
        except Exception:  # a client timeout, "removal already in progress": look again
            pass
        try:
            client.api.inspect_container(ref)
        except docker.errors.NotFound:
            return True
        except Exception:
            pass
        time.sleep(min(0.5 * 2**attempt, 8))
    print(
        f"rcb: could not remove container {ref[:12]}; `rcb sandbox gc` removes it "
        "once this run has ended",
        file=sys.stderr,
    )
    return False


def _owner_alive(labels: dict[str, str]) -> bool:
    if labels.get("rcb.host") != socket.gethostname():
        return False
    try:
        os.kill(int(labels.get("rcb.pid", "0")), 0)
    except (ProcessLookupError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def garbage_collect(*, everything: bool = False) -> tuple[int, int]:
    """Remove rcb containers and volumes whose owning process is gone (all with ``everything``).

    Returns:
        (containers removed, volumes removed).
    """
    client = docker_client()
    containers = volumes = 0
    for container in client.containers.list(all=True, filters={"label": LABEL}):
        if everything or not _owner_alive(container.labels):
            binds = container.attrs.get("HostConfig", {}).get("Binds") or []
            if remove_container(client, container.id, tries=3):
                containers += 1
                for bind in binds:
                    remove_workspace(Path(bind.split(":", 1)[0]))
    collect_workspaces("docker", everything=everything)  # left by a run killed mid-start
    for volume in client.volumes.list(filters={"label": LABEL}):
        labels = volume.attrs.get("Labels") or {}
        if everything or not _owner_alive(labels):
            with contextlib.suppress(Exception):
                volume.remove(force=True)
                volumes += 1
    return containers, volumes
