"""A workspace folder on this machine, shared by the local backend and by Docker's
bind-mounted workspaces.

As root, every writable folder the harness makes (one per attempt) is a tmpfs of its
own with a size and an inode count (``Limits.workspace_mb``, ``workspace_files``): an
attempt that fills it gets ENOSPC, and the files go when the folder is removed. Its
pages are charged to the memory cgroup of the process that writes them, so what the
code writes there counts against the exec's memory limit too. Without root there is
no quota (the workspace is a plain folder on the host's disk).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcb_action.sandbox._base import MAX_READ_BYTES, Limits, SandboxClosedError, UnsafeFileError

_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_SHARED = 2, 4, 4096, 16384, 1 << 20
_MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str, target: Path) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}", str(target))


def mount_tmpfs(target: Path, *, size_bytes: int, inodes: int) -> None:
    """Mount a tmpfs of this size and inode count on ``target`` (root, sticky, 1777).

    Raises:
        OSError: the mount failed (not root, no CAP_SYS_ADMIN).
    """
    options = f"size={size_bytes},nr_inodes={inodes},mode=1777".encode()
    result = _libc.mount(
        b"rcb-workspace", os.fsencode(target), b"tmpfs", _MS_NOSUID | _MS_NODEV, options
    )
    _check(result, "mount tmpfs", target)


def bind_shared(folder: Path) -> None:
    """Make ``folder`` a mount point of its own with shared propagation: mounts made under
    it later reach every container that bind-mounts it with ``rslave`` propagation.

    Raises:
        OSError: a mount call failed.
    """
    path = os.fsencode(folder)
    _check(_libc.mount(path, path, None, _MS_BIND | _MS_REC, None), "bind", folder)
    try:
        _check(_libc.mount(None, path, None, _MS_SHARED, None), "make shared", folder)
    except OSError:
        unmount(folder)
        raise


def unmount(target: Path) -> None:
    """Unmount ``target``; lazily when it is still busy. Never raises."""
    path = os.fsencode(target)
    if _libc.umount2(path, 0) != 0 and ctypes.get_errno() == errno.EBUSY:
        _libc.umount2(path, _MNT_DETACH)


# rcb-<backend>-<task>-p<owner pid>-<random>: a workspace names the process that owns it.
_OWNED = re.compile(r"rcb-(local|docker)-.+-p(\d+)-[^-]+")


def workspace_prefix(backend: str, task_id: str, pid: int | None = None) -> str:
    """How the names of the workspaces process ``pid`` (this one by default) makes for
    ``task_id`` on ``backend`` begin."""
    return f"rcb-{backend}-{task_id}-p{os.getpid() if pid is None else pid}-"


def new_workspace(backend: str, task_id: str) -> Path:
    """A new workspace folder in the temp folder, named for this process, so that a run
    killed before it could clean up (SIGKILL, a crash) can be told from a live one."""
    return Path(tempfile.mkdtemp(prefix=workspace_prefix(backend, task_id)))


def remove_workspace(folder: Path) -> None:
    """Unmount everything under an rcb workspace in the temp folder, then delete it.
    Anything else is left alone."""
    temp = Path(tempfile.gettempdir()).resolve()
    if folder.parent.resolve() != temp or not _OWNED.fullmatch(folder.name):
        return
    with contextlib.suppress(OSError):
        points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
        inside = [Path(p) for p in points if Path(p) == folder or Path(p).is_relative_to(folder)]
        for point in sorted(inside, key=lambda p: len(p.parts), reverse=True):
            unmount(point)
    shutil.rmtree(folder, ignore_errors=True)


def stale_workspaces(backend: str, *, everything: bool = False) -> list[Path]:
    """The workspaces of ``backend`` whose owning process is gone (all with ``everything``)."""
    found = []
    for folder in Path(tempfile.gettempdir()).glob(f"rcb-{backend}-*"):
        match = _OWNED.fullmatch(folder.name)
        if match and folder.is_dir() and (everything or not _alive(int(match.group(2)))):
            found.append(folder)
    return sorted(found)


def collect_workspaces(backend: str, *, everything: bool = False) -> int:
    """Remove the workspaces :func:`stale_workspaces` finds; returns how many went."""
    folders = stale_workspaces(backend, everything=everything)
    for folder in folders:
        remove_workspace(folder)
    return sum(not folder.exists() for folder in folders)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class Quota:
    """The size and file count of each writable folder (a tmpfs of its own)."""

    size_bytes: int
    files: int


_quota_works: bool | None = None
_quota_lock = threading.Lock()


def workspace_quota(limits: Limits) -> Quota | None:
    """The quota for writable folders, or None where tmpfs mounts cannot be made here
    (not root): those folders are then unbounded."""
    global _quota_works
    with _quota_lock:
        if _quota_works is None:
            _quota_works = False
            if os.geteuid() == 0:
                probe = Path(tempfile.mkdtemp(prefix="rcb-probe-"))
                try:
                    mount_tmpfs(probe, size_bytes=1 << 20, inodes=16)
                    unmount(probe)
                    _quota_works = True
                except (OSError, AttributeError):  # AttributeError: a libc without mount
                    pass
                finally:
                    with contextlib.suppress(OSError):
                        probe.rmdir()
    if not _quota_works:
        return None
    return Quota(size_bytes=limits.workspace_mb << 20, files=limits.workspace_files)


class HostFiles:
    """File operations confined to one folder.

    Harness files are root's: read-only ones are 0644 in 0755 folders, so the
    sandbox user can read but not change them. A writable folder is sticky and
    world-writable: the sandbox user may add files but not rename or delete the
    harness's.
    """

    def __init__(self, root: Path, quota: Quota | None = None) -> None:
        self.root = root
        self.quota = quota
        self._mounts: set[Path] = set()
        self._shared = False
        self._mount_lock = threading.Lock()
        self._closed = False

    def path(self, rel: str) -> Path:
        path = (self.root / rel).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ValueError(f"path escapes the workspace: {rel}")
        return path

    def _folders(self, target: Path) -> None:
        """Make ``target`` and the folders above it, up to but never the root: a worker
        still writing after :meth:`close` cannot bring a removed workspace back.

        Raises:
            SandboxClosedError: the workspace is closed.
            FileNotFoundError: the root is gone.
        """
        if self._closed:
            raise SandboxClosedError(f"{self.root}: the workspace is closed")
        current = self.root.resolve()
        for part in target.relative_to(current).parts:
            current = current / part
            current.mkdir(exist_ok=True)

    def write_files(self, files: dict[str, bytes], *, writable: bool = True) -> None:
        for rel, data in files.items():
            path = self.path(rel)
            self._folders(path.parent)
            path.write_bytes(data)
            path.chmod(0o666 if writable else 0o644)

    def mkdir(self, rel: str, *, writable: bool = True) -> None:
        """Make a folder; a writable one gets its own sized tmpfs when there is a quota
        (unless it lies inside one already).

        Raises:
            OSError: the folder or its tmpfs could not be made.
        """
        target = self.path(rel)
        self._folders(target)
        if writable and self.quota is not None:
            with self._mount_lock:
                if self._closed:
                    raise SandboxClosedError(f"{self.root}: the workspace is closed")
                if not any(target.is_relative_to(m) for m in self._mounts):
                    mount_tmpfs(target, size_bytes=self.quota.size_bytes, inodes=self.quota.files)
                    self._mounts.add(target)
        target.chmod(0o1777 if writable else 0o755)

    def share(self) -> None:
        """Make the root a shared mount point, so that the tmpfs of each writable folder,
        mounted after a container started, is seen inside it (``rslave`` binds).

        Raises:
            OSError: the mounts failed.
        """
        bind_shared(self.root)
        self._shared = True

    def _unmount_under(self, target: Path) -> None:
        with self._mount_lock:
            inside = [m for m in self._mounts if m.is_relative_to(target)]
            # Deepest first.
            for mount in sorted(inside, key=lambda m: len(m.parts), reverse=True):
                unmount(mount)
                self._mounts.discard(mount)

    def unmount_all(self) -> None:
        """Unmount every tmpfs this object made, then the root's own bind. Never raises."""
        self._unmount_under(self.root.resolve())
        if self._shared:
            unmount(self.root)
            self._shared = False

    def close(self) -> None:
        """Unmount everything and remove the root; nothing is made under it afterwards.
        A write that was already under way when this began can leave a file behind
        that the first pass misses, so it tries again. Never raises."""
        with self._mount_lock:
            self._closed = True
        for _ in range(5):
            self.unmount_all()
            shutil.rmtree(self.root, ignore_errors=True)
            if not self.root.exists():
                return
            time.sleep(0.05)

    def read_file(self, rel: str, *, max_bytes: int = MAX_READ_BYTES) -> bytes:
        """A plain file's bytes. Never follows a symbolic link in the last part of the
        path and never blocks on a FIFO: both raise :class:`UnsafeFileError`, as does a
        file over ``max_bytes`` (checked before reading, and again while reading)."""
        try:
            folder = self.path(str(Path(rel).parent))
        except ValueError as exc:
            raise UnsafeFileError(str(exc)) from None
        target = folder / Path(rel).name
        try:
            fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFileError(f"{rel} is a symbolic link, not a file") from None
            raise
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise UnsafeFileError(
                    f"{rel} is not a plain file (mode {stat.filemode(info.st_mode)})"
                )
            if info.st_size > max_bytes:
                raise UnsafeFileError(f"{rel} holds {info.st_size} bytes, over {max_bytes}")
            chunks, size = [], 0
            while size <= max_bytes:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size > max_bytes:
                raise UnsafeFileError(f"{rel} grew past {max_bytes} bytes while read")
            return b"".join(chunks)
        finally:
            os.close(fd)

    def remove(self, rel: str) -> None:
        target = self.path(rel)
        self._unmount_under(target)
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)


class DelegatedFiles:
    """The sandbox file operations, handed to a ``files`` object (host folder or archive API)."""

    files: HostFiles | Any

    def write_files(self, files: dict[str, bytes], *, writable: bool = True) -> None:
        self.files.write_files(files, writable=writable)

    def mkdir(self, path: str, *, writable: bool = True) -> None:
        self.files.mkdir(path, writable=writable)

    def read_file(self, path: str, *, max_bytes: int = MAX_READ_BYTES) -> bytes:
        data: bytes = self.files.read_file(path, max_bytes=max_bytes)
        return data

    def remove(self, path: str) -> None:
        self.files.remove(path)
