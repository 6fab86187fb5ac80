"""The local backend: bubblewrap when present, a plain subprocess otherwise.

Under bubblewrap (as root) the code sees a read-only view of the system folders,
the environment's venv and the Python it was made from, a private sized ``/tmp``,
its own ``/proc`` and ``/dev``, no network, and its workspace. It runs as an
unprivileged user (``setpriv``), so the process limit and file permissions bind:
files the harness writes read-only (the tests) cannot be edited or deleted.

As root, each exec runs in a cgroup of its own (made before, removed after), so the
memory and process limits bound all its processes together, and each writable
folder is a sized tmpfs (see ``_files``). Where cgroups cannot be used the rlimits
(per process) remain and a loud warning is printed once; without bubblewrap the
same rlimits apply and a loud warning is printed once.
"""

from __future__ import annotations

import contextlib
import os
import queue
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from rcb_action.errors import RcbError
from rcb_action.sandbox._base import (
    TRUNCATION_MARKER,
    ExecResult,
    Limits,
    Sandbox,
    SandboxBackend,
    gpu_device_nodes,
    host_gpus,
)
from rcb_action.sandbox._cgroups import Cgroups, ExecGroup, detect
from rcb_action.sandbox._envs import build_venv, bwrap_system
from rcb_action.sandbox._files import (
    DelegatedFiles,
    HostFiles,
    collect_workspaces,
    new_workspace,
    workspace_quota,
)
from rcb_action.tasks import Task

# Only these variables reach sandboxed code; API keys and tokens never do.
ENV_ALLOW = ("LANG", "LC_ALL", "TZ")
# Each exec in flight runs as its own unprivileged uid, so the per-uid process
# limit of one sandbox (a fork bomb) cannot starve another. The range depends on
# the harness's pid, so two rcb runs on one machine use different uids.
UID_SLOTS = 64
_warned_unconfined = False
_warned_no_cgroups = False
_warn_lock = threading.Lock()


def _warn(text: str) -> None:
    bar = "!" * 78
    print(f"{bar}\nrcb WARNING: {text}\n{bar}", file=sys.stderr, flush=True)


def _warn_unconfined(reason: str) -> None:
    global _warned_unconfined
    with _warn_lock:
        if _warned_unconfined:
            return
        _warned_unconfined = True
    _warn(
        f"{reason}.\nModel-written code will run as a plain subprocess with rlimits only: "
        "it can read your files and reach the network.\nInstall bubblewrap (apt-get install bubblewrap) "
        "or use --sandbox docker."
    )


def _warn_no_cgroups(reason: str) -> None:
    global _warned_no_cgroups
    with _warn_lock:
        if _warned_no_cgroups:
            return
        _warned_no_cgroups = True
    _warn(
        f"no cgroup for sandboxed code ({reason}).\nMemory and process limits bind each "
        "process alone, not all of an attempt's processes together.\nRun rcb as root on a "
        "host with the memory and pids cgroup controllers, or use --sandbox docker."
    )


def _drain(stream: object, sink: bytearray, limit: int, flags: dict[str, bool]) -> None:
    """Read a pipe to its end, keeping at most ``limit`` bytes (the rest is discarded)."""
    read = stream.read  # type: ignore[attr-defined]
    while True:
        chunk = read(65536)
        if not chunk:
            return
        room = limit - len(sink)
        if room > 0:
            sink += chunk[:room]
        if len(chunk) > room:
            flags["truncated"] = True


def _decode(buffer: bytearray, truncated: bool, limit: int) -> str:
    text = buffer.decode("utf-8", "replace")
    return text + TRUNCATION_MARKER.format(limit=limit) if truncated else text


class LocalSandbox(DelegatedFiles, Sandbox):
    """A workspace folder on this machine; code runs under bubblewrap when available."""

    def __init__(
        self,
        backend: LocalBackend,
        venv: Path | None,
        workspace: Path,
        *,
        uid: int | None = None,
        mounts: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        devices: list[str] | None = None,
    ) -> None:
        self.backend = backend
        # Host device nodes passed through (a task's GPUs); bubblewrap's /dev has none.
        self.devices = list(devices or [])
        # None: a clean sandbox (the system's python3, no task environment).
        self.venv = venv
        self.workspace = str(workspace)
        self.files = HostFiles(workspace, backend.quota)
        self.python = str(venv / "bin" / "python") if venv is not None else "python3"
        # A clean sandbox keeps one uid for its life, so files one command makes the next may change.
        self.uid = uid
        self.mounts = dict(mounts or {})
        self.env = dict(env or {})
        self._procs: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    # files: see DelegatedFiles -----------------------------------------
    def _path(self, rel: str) -> Path:
        return self.files.path(rel)

    # exec --------------------------------------------------------------
    def _limits(self, timeout_s: float) -> None:
        limits = self.backend.limits
        memory = limits.memory_mb * 1024 * 1024
        cpu = int(timeout_s) + 5
        for which, value in (
            (resource.RLIMIT_AS, memory),
            (resource.RLIMIT_CPU, cpu),
            (resource.RLIMIT_FSIZE, limits.file_size_mb * 1024 * 1024),
            (resource.RLIMIT_NOFILE, limits.open_files),
            (resource.RLIMIT_NPROC, limits.processes),
            (resource.RLIMIT_CORE, 0),
        ):
            resource.setrlimit(which, (value, value))

    def _argv(self, argv: list[str], cwd: str, env: dict[str, str], uid: int) -> list[str]:
        workdir = str(self._path(cwd))
        if not self.backend.confined:
            return [*self.backend.pid_namespace, *argv]
        base = Path(sys.base_prefix).resolve()
        cmd = bwrap_system(self.backend.bwrap)
        # /tmp first: the venv or the workspace may live under it and are bound on top.
        tmp_bytes = str(self.backend.limits.tmp_mb << 20)
        cmd += ["--perms", "1777", "--size", tmp_bytes, "--tmpfs", "/tmp"]
        cmd += ["--proc", "/proc", "--dev", "/dev"]
        for node in self.devices:
            cmd += ["--dev-bind", node, node]
        made: set[str] = {"/", "/tmp", "/usr"}
        binds = [(self.workspace, "--bind")]
        if self.venv is not None:
            binds[:0] = [(str(base), "--ro-bind"), (str(self.venv.resolve()), "--ro-bind")]
        for path, how in binds:
            if path.startswith("/usr/"):
                continue
            # bubblewrap makes missing parents 0700, which the sandbox user could not cross.
            for parent in reversed(Path(path).parents):
                if str(parent) not in made:
                    made.add(str(parent))
                    cmd += ["--perms", "0755", "--dir", str(parent)]
            cmd += [how, path, path]
        if self.venv is not None and str(self.venv.resolve()) != str(self.venv):
            cmd += ["--symlink", str(self.venv.resolve()), str(self.venv)]
        for source, target in self.mounts.items():
            cmd += ["--ro-bind", source, target]
        cmd += ["--chdir", workdir, "--clearenv"]
        for key, value in env.items():
            cmd += ["--setenv", key, value]
        cmd += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        cmd += ["--inh-caps=-all", "--bounding-set=-all", "--"]
        return cmd + argv

    def exec(
        self,
        argv: list[str],
        *,
        timeout_s: float,
        cwd: str = ".",
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> ExecResult:
        full_env = {key: os.environ[key] for key in ENV_ALLOW if key in os.environ}
        full_env.update(
            {
                "PATH": f"{self.venv}/bin:/usr/bin:/bin" if self.venv else "/usr/bin:/bin",
                "HOME": "/tmp",
                "PYTHONDONTWRITEBYTECODE": "1",
            }
        )
        full_env.update(self.env)
        full_env.update(env or {})
        started = time.monotonic()
        if self.uid is not None:
            return self._run(argv, cwd, full_env, stdin, timeout_s, self.uid, started)
        uid = self.backend.take_uid()
        try:
            return self._run(argv, cwd, full_env, stdin, timeout_s, uid, started)
        finally:
            self.backend.give_uid(uid)

    def _run(
        self,
        argv: list[str],
        cwd: str,
        full_env: dict[str, str],
        stdin: bytes | None,
        timeout_s: float,
        uid: int,
        started: float,
    ) -> ExecResult:
        limit = self.backend.limits.output_bytes
        out, err = bytearray(), bytearray()
        flags = {"truncated": False}
        group = self.backend.exec_group()
        procs_files = group.procs_files() if group is not None else []

        def before_exec() -> None:
            # In the child, before exec: nothing of the command ever runs outside its group.
            ExecGroup.join(procs_files)
            self._limits(timeout_s)

        try:
            proc = subprocess.Popen(
                self._argv(argv, cwd, full_env, uid),
                cwd=str(self._path(cwd)),
                env=full_env,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=before_exec,
            )
        except BaseException:
            if group is not None:
                self.backend.drop_group(group)
            raise
        with self._lock:
            self._procs.add(proc)
        readers = [
            threading.Thread(target=_drain, args=(proc.stdout, out, limit, flags), daemon=True),
            threading.Thread(target=_drain, args=(proc.stderr, err, limit, flags), daemon=True),
        ]
        for reader in readers:
            reader.start()
        if stdin is not None and proc.stdin is not None:
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except OSError:
                pass
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            # The whole tree goes, daemons included: under bubblewrap the pid
            # namespace dies with its first process; without it, the group is killed.
            _kill_group(proc)
            proc.wait()
            oom_killed = group is not None and group.oom_killed()
            if group is not None:
                self.backend.drop_group(group)
            for reader in readers:
                reader.join(timeout=5)
            with self._lock:
                self._procs.discard(proc)
        return ExecResult(
            returncode=proc.returncode,
            stdout=_decode(out, flags["truncated"] and len(out) >= limit, limit),
            stderr=_decode(err, flags["truncated"] and len(err) >= limit, limit),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            output_truncated=flags["truncated"],
            oom_killed=oom_killed,
        )

    def kill_all(self) -> None:
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            _kill_group(proc)

    def cleanup(self) -> None:
        self.kill_all()
        self.files.close()
        with self._lock:
            uid, self.uid = self.uid, None
        if uid is not None:
            self.backend.give_uid(uid)


def _pid_namespace_prefix() -> list[str]:
    """Without bubblewrap, each command still gets its own pid namespace when util-linux's
    ``unshare`` can make one (as root, or with unprivileged user namespaces): killing its
    first process then kills every process it started, ``setsid`` daemons included.
    Empty when it cannot; then only the process group is killed."""
    unshare = shutil.which("unshare")
    if not unshare:
        return []
    prefix = [unshare, "--user", "--map-root-user", "--pid", "--fork", "--kill-child"]
    try:
        probe = subprocess.run([*prefix, "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    return prefix if probe.returncode == 0 else []


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class LocalBackend(SandboxBackend):
    """Sandboxes on this machine, one workspace folder per task."""

    name = "local"

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        use_bwrap: bool | None = None,
        gpus: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.limits = limits or Limits()
        self.gpus = host_gpus() if gpus is None else gpus
        self.bwrap = shutil.which("bwrap") or ""
        wanted = bool(self.bwrap) if use_bwrap is None else use_bwrap
        self.confined = (
            wanted and bool(self.bwrap) and os.geteuid() == 0 and bool(shutil.which("setpriv"))
        )
        if not self.confined:
            why = (
                "bubblewrap (bwrap) is not installed"
                if not self.bwrap
                else "bubblewrap needs root here"
            )
            if use_bwrap is False:
                why = "bubblewrap was turned off"
            _warn_unconfined(why)
        self.pid_namespace = [] if self.confined else _pid_namespace_prefix()
        self.cgroups: Cgroups | None
        self.cgroups, why_not = detect()
        if self.cgroups is None and self.confined:
            _warn_no_cgroups(why_not)
        elif self.cgroups is not None:
            self.cgroups.collect_stale()
        collect_workspaces("local")  # of runs killed before they could clean up
        self.quota = workspace_quota(self.limits)
        # Groups that outlived their exec (a process that would not die): retried at close.
        self._stale_groups: list[ExecGroup] = []
        self._stale_lock = threading.Lock()
        self._venvs: dict[Path, Path] = {}
        first = 200_000 + (os.getpid() % 4096) * UID_SLOTS
        self._uids: queue.Queue[int] = queue.Queue()
        for uid in range(first, first + UID_SLOTS):
            self._uids.put(uid)

    def exec_group(self) -> ExecGroup | None:
        """A new cgroup for one exec with this backend's limits, or None without cgroups.

        Raises:
            OSError: the group could not be made (the exec fails; the caller retries).
        """
        if self.cgroups is None:
            return None
        return self.cgroups.create(
            memory_bytes=self.limits.memory_mb << 20,
            processes=self.limits.processes,
        )

    def drop_group(self, group: ExecGroup) -> None:
        """Kill what is left in an exec's group and remove it (later, if it will not go)."""
        if not group.destroy():
            with self._stale_lock:
                self._stale_groups.append(group)

    def close(self) -> None:
        super().close()
        with self._stale_lock:
            stale, self._stale_groups = self._stale_groups, []
        for group in stale:
            group.destroy(wait_s=2.0)

    def devices_for(self, task: Task) -> list[str]:
        """The GPU device nodes a sandbox of ``task`` gets: all of this host's when the
        task uses a GPU (``gpu: optional`` or ``required``), bound into bubblewrap's
        /dev; none otherwise."""
        return [] if task.config.gpu == "none" else gpu_device_nodes(self.gpus)

    def take_uid(self) -> int:
        """A sandbox uid no other exec of this run is using (waits if all are busy)."""
        return self._uids.get()

    def give_uid(self, uid: int) -> None:
        self._uids.put(uid)

    def prepare(self, task: Task) -> None:
        if task.env_dir not in self._venvs:
            self._venvs[task.env_dir] = build_venv(task.env_dir)

    def open(self, task: Task) -> LocalSandbox:
        self.prepare(task)
        workspace = new_workspace("local", task.id)
        # Attempts of one task share the workspace: each runs in a folder with a random
        # name, and no sandbox user may list the root, so no attempt can find another's
        # folder and plant a module there.
        workspace.chmod(0o711)
        sandbox = LocalSandbox(
            self, self._venvs[task.env_dir], workspace, devices=self.devices_for(task)
        )
        return self.track(sandbox)

    def open_clean(
        self,
        task: Task,
        *,
        mounts: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
    ) -> LocalSandbox:
        if not self.confined:
            raise RcbError(
                "--sandbox local: running an agent's commands needs bubblewrap as root "
                "(apt-get install bubblewrap); or use --sandbox docker"
            )
        workspace = new_workspace("local", task.id)
        workspace.chmod(0o755)
        sandbox = LocalSandbox(
            self, None, workspace, uid=self.take_uid(), mounts=mounts, env=env,
            devices=self.devices_for(task),
        )  # fmt: skip
        return self.track(sandbox)
