"""The sandbox interface: exec with a timeout, write and read files, clean up."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from rcb_action.errors import RcbError
from rcb_action.tasks import Task

TRUNCATION_MARKER = "\n[rcb: output cut here: more than {limit} bytes]\n"
# The most the harness reads back from a sandbox in one file unless a caller asks for
# less (verdicts, junit reports, results): anything larger was not written by an honest run.
MAX_READ_BYTES = 64 << 20


class UnsafeFileError(OSError):
    """A file the harness was asked to read is not a plain file inside the workspace
    (a symbolic link, a FIFO, a device, or too large): something in the sandbox put
    it there, and reading it could hang or mislead the harness."""


class SandboxClosedError(RcbError):
    """A sandbox was used after its backend closed it (a worker still running while
    Ctrl-C winds the run down): nothing is made again where cleanup has been."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one exec (one attempt's run), on both backends.

    Attributes:
        memory_mb: memory of all the exec's processes together, tmpfs pages they
            write (``/tmp``, the attempt folder) included; no swap. Local: a cgroup per
            exec (as root), plus ``RLIMIT_AS`` per process; Docker: the container's
            limit. Exceeded: the kernel kills a process, ``ExecResult.oom_killed``
            (failure class ``memory``); one process alone gets ``MemoryError``.
        processes: processes and threads of the exec together, the sandbox's own two
            included (bubblewrap's monitor and init; Docker's init and ``sleep``).
            Local: the cgroup's ``pids.max`` and ``RLIMIT_NPROC`` of the exec's own
            uid; Docker: the container's pids limit. Exceeded: ``fork``/``clone``
            fail with EAGAIN in the code.
        file_size_mb: the largest file one process may write (``RLIMIT_FSIZE``, both
            backends). Exceeded: SIGXFSZ (exit status -25 or 153), or EFBIG where
            the signal is ignored. 1 GB: an agent that installs torch from the
            wheelhouse writes its 434 MB ``libtorch_cpu.so``; the writable folders'
            sizes (``tmp_mb``, ``workspace_mb``) bound what all files take together.
        open_files: open file descriptors per process (``RLIMIT_NOFILE``). Exceeded: EMFILE.
        output_bytes: stdout and stderr each kept up to this size; the rest is read
            and dropped (``output_truncated``), the run goes on to its end or timeout.
        cpus: CPUs (Docker's CPU quota; local runs are not throttled, only timed).
        tmp_mb: size of the exec's private ``/tmp`` (a fresh tmpfs every exec on both
            backends). Exceeded: ENOSPC in the code.
        workspace_mb: size of each writable folder the harness makes (an attempt's
            folder: a tmpfs of its own when the harness runs as root). Exceeded: ENOSPC.
        workspace_files: files and folders each writable folder may hold (the tmpfs's
            inode count). Exceeded: ENOSPC.
    """

    memory_mb: int = 4096
    processes: int = 256
    file_size_mb: int = 1024
    open_files: int = 1024
    output_bytes: int = 1 << 20
    cpus: float = 1.0
    tmp_mb: int = 512
    workspace_mb: int = 2048
    workspace_files: int = 65536


@dataclass(frozen=True)
class ExecResult:
    """What one exec did."""

    returncode: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    output_truncated: bool = False
    oom_killed: bool = False


class Sandbox(ABC):
    """A place to run untrusted code for one task.

    Paths are relative to the sandbox's workspace, the only writable place.

    Attributes:
        python: the environment's interpreter, as seen inside the sandbox.
        workspace: the workspace's absolute path, as seen inside the sandbox.
    """

    python: str
    workspace: str

    @abstractmethod
    def exec(
        self,
        argv: list[str],
        *,
        timeout_s: float,
        cwd: str = ".",
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> ExecResult:
        """Run ``argv`` and wait; on timeout the whole process tree is killed."""

    @abstractmethod
    def write_files(self, files: dict[str, bytes], *, writable: bool = True) -> None:
        """Create files (and their folders). ``writable=False`` keeps them out of the
        candidate's reach (it cannot edit or delete them)."""

    @abstractmethod
    def mkdir(self, path: str, *, writable: bool = True) -> None:
        """Create a folder; when ``writable`` the code may add files to it, but never
        rename or delete the harness's files in it.

        A writable folder (one per attempt) is bounded where the backend can: a tmpfs
        of its own of ``Limits.workspace_mb`` and ``Limits.workspace_files`` (the
        harness as root, and for Docker a daemon on this host); ``remove`` unmounts it.
        """

    @abstractmethod
    def read_file(self, path: str, *, max_bytes: int = MAX_READ_BYTES) -> bytes:
        """A plain file's bytes, refused before reading when it holds more than ``max_bytes``.

        Raises:
            FileNotFoundError: the file is absent.
            UnsafeFileError: a symbolic link, a FIFO, a device, or over ``max_bytes``.
        """

    @abstractmethod
    def remove(self, path: str) -> None:
        """Delete a file or folder tree, if present (unmounting a writable folder's tmpfs)."""

    @abstractmethod
    def cleanup(self) -> None:
        """Kill what still runs and free everything; safe to call twice."""


SandboxT = TypeVar("SandboxT", bound="Sandbox")


def host_gpus() -> list[str]:
    """NVIDIA GPU devices on this host (``/dev/nvidia0`` ...)."""
    return sorted(str(p) for p in Path("/dev").glob("nvidia[0-9]*"))


# The driver's control nodes a CUDA program opens besides the GPUs themselves.
GPU_CONTROL_NODES = (
    "/dev/nvidiactl",
    "/dev/nvidia-uvm",
    "/dev/nvidia-uvm-tools",
    "/dev/nvidia-modeset",
)


def gpu_device_nodes(gpus: list[str]) -> list[str]:
    """What a sandbox must pass through for ``gpus``: those and the control nodes present."""
    if not gpus:
        return []
    return [*gpus, *(node for node in GPU_CONTROL_NODES if Path(node).exists())]


class SandboxBackend(ABC):
    """Makes sandboxes for tasks and cleans all of them up on any exit path.

    Attributes:
        gpus: the GPU devices tasks may use here (tests pass a fake list).
    """

    name: str
    gpus: list[str]

    def __init__(self) -> None:
        self._open: set[Sandbox] = set()
        self._open_lock = threading.Lock()
        self._closed = False

    def track(self, sandbox: SandboxT) -> SandboxT:
        """Remember an opened sandbox, so that ``close`` can clean it up on any exit path.

        Raises:
            SandboxClosedError: the backend is closed; the sandbox is cleaned up at once.
        """
        with self._open_lock:
            closed = self._closed
            if not closed:
                self._open.add(sandbox)
        if closed:
            sandbox.cleanup()
            raise SandboxClosedError(f"--sandbox {self.name}: the sandboxes are closed")
        return sandbox

    def prepare(self, task: Task) -> None:
        """Build or fetch the task's environment (cached); called before any exec.

        Raises:
            EnvironmentBuildError: the environment failed to build.
        """
        return None

    @abstractmethod
    def open(self, task: Task) -> Sandbox:
        """A fresh (or warm) sandbox for ``task``; the caller gives it back with ``release``."""

    def open_clean(
        self,
        task: Task,
        *,
        mounts: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
    ) -> Sandbox:
        """A sandbox on the bare base system, with no task environment installed: the
        reproduction track's agent starts here and installs what it needs.

        Its ``python`` is the system's ``python3``. Every exec runs as one and the same
        unprivileged user, so what one command creates the next may change.

        Args:
            task: the task (for labels and GPU requests).
            mounts: host folders mounted read-only, host path -> absolute path inside.
            env: variables added to every exec (an exec's own ``env`` wins).

        Raises:
            RcbError: this backend cannot isolate arbitrary commands here.
        """
        raise RcbError(f"--sandbox {self.name}: no clean sandbox for agents on this backend")

    def release(self, sandbox: Sandbox) -> None:
        """Clean a sandbox up and forget it."""
        sandbox.cleanup()
        with self._open_lock:
            self._open.discard(sandbox)

    def usable_gpus(self) -> list[str]:
        """The GPUs this backend can pass through to a sandbox here."""
        return self.gpus

    def skip_reason(self, task: Task) -> str | None:
        """Why this backend cannot run ``task`` here, or None. A task that requires a
        GPU on a host without one is skipped with this reason, never failed."""
        if task.config.gpu == "required" and not self.gpus:
            return "skipped: the task requires a GPU and this host has none"
        return None

    def close(self) -> None:
        """Kill and remove everything this backend started, and open nothing more.
        Safe to call twice."""
        with self._open_lock:
            self._closed = True
            sandboxes = list(self._open)
            self._open.clear()
        for sandbox in sandboxes:
            sandbox.cleanup()
