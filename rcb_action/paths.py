"""Where rcb keeps caches that outlive a run (venvs, reference runs, fetched papers)."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$RCB_CACHE_DIR`` (default ``~/.cache/rcb``) joined with ``parts``, created."""
    root = Path(os.environ.get("RCB_CACHE_DIR") or Path.home() / ".cache" / "rcb")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


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
