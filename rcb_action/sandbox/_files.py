"""A workspace folder on this machine, shared by the local backend and by Docker's
bind-mounted workspaces."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from rcb_action.sandbox._base import UnsafeFileError

# The most the harness reads back from a sandbox in one file (verdicts, junit reports,
# results): anything larger was not written by an honest run.
MAX_READ_BYTES = 64 << 20


class HostFiles:
    """File operations confined to one folder.

    Harness files are root's: read-only ones are 0644 in 0755 folders, so the
    sandbox user can read but not change them. A writable folder is sticky and
    world-writable: the sandbox user may add files but not rename or delete the
    harness's.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, rel: str) -> Path:
        path = (self.root / rel).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise ValueError(f"path escapes the workspace: {rel}")
        return path

    def write_files(self, files: dict[str, bytes], *, writable: bool = True) -> None:
        for rel, data in files.items():
            path = self.path(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o666 if writable else 0o644)

    def mkdir(self, rel: str, *, writable: bool = True) -> None:
        target = self.path(rel)
        target.mkdir(parents=True, exist_ok=True)
        target.chmod(0o1777 if writable else 0o755)

    def read_file(self, rel: str) -> bytes:
        """A plain file's bytes. Never follows a symbolic link in the last part of the
        path and never blocks on a FIFO: both raise :class:`UnsafeFileError`."""
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
            if info.st_size > MAX_READ_BYTES:
                raise UnsafeFileError(f"{rel} holds {info.st_size} bytes, over {MAX_READ_BYTES}")
            chunks, size = [], 0
            while size <= MAX_READ_BYTES:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            if size > MAX_READ_BYTES:
                raise UnsafeFileError(f"{rel} grew past {MAX_READ_BYTES} bytes while read")
            return b"".join(chunks)
        finally:
            os.close(fd)

    def remove(self, rel: str) -> None:
        target = self.path(rel)
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

    def read_file(self, path: str) -> bytes:
        data: bytes = self.files.read_file(path)
        return data

    def remove(self, path: str) -> None:
        self.files.remove(path)
