"""A reproduction task's data, and the splits rcb computes from what the reruns read.

A task may ship its data in ``data/<split>/`` (one file per example, or per block of
examples). The files are copied read-only into the agent's folder and into every rerun;
the agent reads them and never reports which examples it used: the rerun's tracer records
every file of ``data/`` a process opens, and rcb hashes those files itself. The hashes the
agent might report are compared with these, never trusted.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rcb_action.tasks import DATA_DIR, SWAP_SUFFIX, Task


def _folder_files(folder: Path) -> dict[str, Path]:
    return {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def split_names(task: Task) -> list[str]:
    """The splits the task ships (its ``data/`` folders, not the swap folders)."""
    root = task.root / DATA_DIR
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.endswith(SWAP_SUFFIX))


def _shipped_paths(task: Task) -> dict[str, Path]:
    return {
        f"{DATA_DIR}/{split}/{rel}": path
        for split in split_names(task)
        for rel, path in _folder_files(task.root / DATA_DIR / split).items()
    }


def shipped(task: Task) -> dict[str, bytes]:
    """The files the agent gets, by path under its folder (``data/train/w00.npy``); the
    swap folders stay with the harness."""
    return {rel: path.read_bytes() for rel, path in _shipped_paths(task).items()}


def swapped(task: Task, split: str) -> dict[str, bytes]:
    """What replaces ``data/<split>/`` in the leakage rerun, by path under the agent's folder."""
    folder = task.root / DATA_DIR / f"{split}{SWAP_SUFFIX}"
    return {f"{DATA_DIR}/{split}/{rel}": p.read_bytes() for rel, p in _folder_files(folder).items()}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_splits(task: Task, read: set[str]) -> dict[str, list[str]]:
    """Each split's examples the reruns read, as sha256 hex digests of the files rcb
    shipped: ``read`` holds paths under the agent's folder (``data/test/w08.npy``)."""
    files = _shipped_paths(task)
    splits: dict[str, list[str]] = {}
    for path in sorted(read):
        if path in files:  # only files rcb shipped, whatever the trace file says
            splits.setdefault(path.split("/")[1], []).append(digest(files[path].read_bytes()))
    return {name: sorted(hashes) for name, hashes in splits.items()}
