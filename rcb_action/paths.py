"""Where rcb keeps caches that outlive a run (venvs, reference runs, fetched papers),
and how it writes a file whole or not at all."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$RCB_CACHE_DIR`` (default ``~/.cache/rcb``) joined with ``parts``, created."""
    root = Path(os.environ.get("RCB_CACHE_DIR") or Path.home() / ".cache" / "rcb")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``path`` whole or not at all: a private staging file beside it, flushed and
    fsynced, then renamed into place (readers see the old file or the new one).

    Raises:
        OSError: the folder cannot be written.
    """
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        with open(staging, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(staging, path)
    finally:
        staging.unlink(missing_ok=True)


def build_once(root: Path, key: str, build: Callable[[Path, Path], None]) -> Path:
    """``root/key``, made by ``build(staging, log)`` the first time and reused after.

    Concurrent callers (threads or processes) wait on a file lock; ``build`` works in
    a private staging folder that is renamed into place only when it returns, so an
    interrupted or failed build leaves nothing half-made. ``build`` raises to fail;
    its log is ``root/key.log``.
    """
    target = root / key
    marker = target / ".rcb-complete"
    if marker.is_file():
        return target
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.is_file():
            return target
        staging = root / f".{key}.{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            build(staging, root / f"{key}.log")
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        (staging / ".rcb-complete").write_text(key + "\n")
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    return target
