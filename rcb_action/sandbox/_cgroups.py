"""Control groups: one per exec, so that all of an attempt's processes share one memory
and one process limit (rlimits bind each process alone).

Version 2 is used where it is the unified hierarchy with the memory and pids
controllers; version 1 otherwise (its memory and pids hierarchies). A group is made
under the harness's own group where that is allowed (v1 always; v2 when the memory and
pids controllers are delegated to it), else under the hierarchy's root. Only root can
do this; elsewhere :func:`detect` says why not and the caller falls back to rlimits.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# Every group this process makes is called rcb-<pid>-<n>: a later run can tell the
# groups of a run that is gone (see ``Cgroups.collect_stale``) from a live one's.
PREFIX = "rcb-"
_counter = itertools.count()
_counter_lock = threading.Lock()


def _mountinfo() -> list[tuple[str, str, str, set[str]]]:
    """(mount root, mount point, fs type, super options) of every mount."""
    rows = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(fields) < 5 or len(tail) < 3:
                continue
            rows.append((fields[3], fields[4], tail[0], set(tail[2].split(","))))
    return rows


def _groups(pid: str = "self") -> dict[str, str]:
    """Controller (or "" for v2) -> the group path of process ``pid``."""
    groups: dict[str, str] = {}
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                groups[controller] = path
    return groups


def _inside(mount_root: str, mount_point: str, group: str) -> Path | None:
    """The folder of ``group`` under a cgroup mount, or None when the mount cannot see it."""
    rel = os.path.relpath(group, mount_root)
    if rel.startswith(".."):
        return None
    return Path(mount_point) / rel if rel != "." else Path(mount_point)


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _read_key(path: Path, key: str) -> int:
    """A ``key value`` line's value in a cgroup file (memory.events, memory.oom_control)."""
    with contextlib.suppress(OSError, ValueError):
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    return 0


def oom_kills(folders: list[Path]) -> int:
    """Processes the kernel killed for memory in these groups so far (v1 or v2 files)."""
    total = 0
    for folder in folders:
        if (folder / "memory.events").exists():
            total += _read_key(folder / "memory.events", "oom_kill")
        elif (folder / "memory.oom_control").exists():
            total += _read_key(folder / "memory.oom_control", "oom_kill")
    return total


@dataclass
class ExecGroup:
    """The group (v2) or groups (v1: memory and pids) of one exec."""

    folders: list[Path]

    def procs_files(self) -> list[bytes]:
        """The ``cgroup.procs`` paths a child writes itself into (see :meth:`join`)."""
        return [os.fsencode(folder / "cgroup.procs") for folder in self.folders]

    @staticmethod
    def join(procs_files: list[bytes]) -> None:
        """Move the calling process into the group: for ``preexec_fn``, between fork and exec,
        so that nothing of the exec ever runs outside it. Raises OSError on failure."""
        pid = str(os.getpid()).encode()
        for path in procs_files:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of this exec for exceeding the memory limit."""
        return oom_kills(self.folders) > 0

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders:
            with contextlib.suppress(OSError, ValueError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return sorted(found)

    def destroy(self, *, wait_s: float = 10.0) -> bool:
        """Kill whatever still runs in the group and remove it. True when it is gone."""
        deadline = time.monotonic() + wait_s
        kill_file = self.folders[0] / "cgroup.kill"
        while True:
            if kill_file.exists():
                with contextlib.suppress(OSError):
                    _write(kill_file, "1")
            else:
                for pid in self.pids():
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
            left = []
            for folder in self.folders:
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    pass
                except OSError:
                    # EBUSY while killed processes are still exiting.
                    left.append(folder)
            self.folders = left
            if not left:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)


class Cgroups:
    """Where this process makes exec groups, and how (v1 or v2)."""

    def __init__(self, version: int, parents: dict[str, Path]) -> None:
        self.version = version
        # v2: {"": parent}; v1: {"memory": parent, "pids": parent}.
        self.parents = parents

    def create(self, *, memory_bytes: int, processes: int) -> ExecGroup:
        """A new group with these limits (swap included in the memory limit).

        Raises:
            OSError: the group could not be made or limited (it is removed again).
        """
        with _counter_lock:
            name = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        group = ExecGroup([])
        try:
            for controller, parent in self.parents.items():
                folder = parent / name
                folder.mkdir()
                group.folders.append(folder)
                if controller in ("", "memory"):
                    self._limit_memory(folder, memory_bytes)
                if controller in ("", "pids"):
                    _write(folder / "pids.max", str(processes))
        except OSError:
            group.destroy(wait_s=1.0)
            raise
        return group

    def _limit_memory(self, folder: Path, memory_bytes: int) -> None:
        if self.version == 2:
            _write(folder / "memory.max", str(memory_bytes))
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")
            return
        _write(folder / "memory.limit_in_bytes", str(memory_bytes))
        # Memory plus swap: only where swap accounting is on (then swap cannot extend it).
        if (folder / "memory.memsw.limit_in_bytes").exists():
            _write(folder / "memory.memsw.limit_in_bytes", str(memory_bytes))

    def collect_stale(self) -> int:
        """Remove the groups of rcb processes that are gone (killed before they could
        clean up). Returns how many were removed."""
        removed = 0
        for folder in self.leftovers():
            owner = folder.name.removeprefix(PREFIX).split("-")[0]
            if not owner.isdigit() or Path(f"/proc/{owner}").exists():
                continue
            if ExecGroup([folder]).destroy(wait_s=1.0):
                removed += 1
        return removed

    def leftovers(self) -> list[Path]:
        """Groups named like ours (any rcb process) under our parents."""
        found: list[Path] = []
        for parent in self.parents.values():
            with contextlib.suppress(OSError):
                found += [p for p in parent.iterdir() if p.is_dir() and p.name.startswith(PREFIX)]
        return found


def _v2_parent(mount_point: str, mount_root: str, own: str) -> Path | None:
    """Our own v2 group when memory and pids are delegated to it, else the root group."""
    candidates = []
    folder = _inside(mount_root, mount_point, own)
    if folder is not None:
        candidates.append(folder)
    candidates.append(Path(mount_point))
    for folder in candidates:
        try:
            enabled = set((folder / "cgroup.subtree_control").read_text().split())
            if not {"memory", "pids"} <= enabled and folder == Path(mount_point):
                # The root group may always enable controllers for its children.
                _write(folder / "cgroup.subtree_control", "+memory +pids")
                enabled = set((folder / "cgroup.subtree_control").read_text().split())
        except OSError:
            continue
        if {"memory", "pids"} <= enabled:
            return folder
    return None


def detect() -> tuple[Cgroups | None, str]:
    """The cgroups this process can use for execs, or None and the reason why not."""
    if os.geteuid() != 0:
        return None, "cgroups need root"
    mounts = _mountinfo()
    own = _groups()
    found: Cgroups | None = None
    for root, point, fstype, _ in mounts:
        if fstype != "cgroup2":
            continue
        with contextlib.suppress(OSError):
            controllers = set((Path(point) / "cgroup.controllers").read_text().split())
            if {"memory", "pids"} <= controllers:
                parent = _v2_parent(point, root, own.get("", "/"))
                if parent is not None:
                    found = Cgroups(2, {"": parent})
                    break
    if found is None:
        parents: dict[str, Path] = {}
        for root, point, fstype, options in mounts:
            for controller in ("memory", "pids"):
                if fstype == "cgroup" and controller in options and controller not in parents:
                    folder = _inside(root, point, own.get(controller, "/"))
                    if folder is not None and folder.is_dir():
                        parents[controller] = folder
        if set(parents) == {"memory", "pids"}:
            found = Cgroups(1, parents)
    if found is None:
        return None, "no cgroup with the memory and pids controllers is mounted here"
    try:
        probe = found.create(memory_bytes=64 << 20, processes=8)
    except OSError as exc:
        return None, f"cannot make a cgroup here ({exc.strerror or exc})"
    probe.destroy()
    return found, ""


def memory_folders(pid: int) -> list[Path]:
    """The memory cgroup folder of process ``pid`` as this host sees it (e.g. a container's
    init, to read its OOM kills), or an empty list when it cannot be found."""
    groups = _groups(str(pid))
    for root, point, fstype, options in _mountinfo():
        if fstype == "cgroup" and "memory" in options and "memory" in groups:
            folder = _inside(root, point, groups["memory"])
        elif fstype == "cgroup2" and "" in groups:
            folder = _inside(root, point, groups[""])
            if folder is not None and not (folder / "memory.events").exists():
                folder = None
        else:
            continue
        if folder is not None and folder.is_dir():
            return [folder]
    return []
