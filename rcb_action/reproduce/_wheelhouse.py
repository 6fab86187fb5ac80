"""The wheelhouse: the only packages an agent can install, since its sandbox has no network.

rcb downloads, once, wheels for what a task allows (its environment's
requirements and its ``reproduction.packages``, with their dependencies) for the
sandbox's Python, into ``$RCB_CACHE_DIR/wheelhouses/<hash>``. A task may offer several
versions of a package (``fastlsq==0.1.0`` and ``fastlsq==0.7.1``), so that choosing the
right ones is part of the agent's work: each further version is resolved in a pass of
its own, beside the first pins of every other package. The folder is
mounted read-only into the sandbox, and pip there is configured to use it alone
(``--no-index --find-links``). The download uses pip's own configuration on this
machine (index, extra index, CA bundle, find-links), so proxied and air-gapped
machines work as they do for pip.
"""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from pathlib import Path

from rcb_action.errors import RcbError
from rcb_action.paths import build_once, cache_dir
from rcb_action.sandbox import canonical_name
from rcb_action.tasks import Task

WHEELHOUSE_MOUNT = "/wheels"


def sandbox_pip_env() -> dict[str, str]:
    """What every exec in an agent's sandbox gets: pip on the wheelhouse only, one thread."""
    return {
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": WHEELHOUSE_MOUNT,
        # os.devnull makes pip skip every configuration file (the host's included).
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
    }


def allowed_packages(task: Task) -> list[str]:
    """The requirement lines a task's wheelhouse is built from, sorted."""
    lines = (task.env_dir / "requirements.txt").read_text(encoding="utf-8").splitlines()
    found = {line.split("#", 1)[0].strip() for line in lines}
    if task.config.reproduction is not None:
        found |= {p.strip() for p in task.config.reproduction.packages}
    return sorted(line for line in found if line and not line.startswith("-"))


def download_passes(requirements: list[str]) -> list[list[str]]:
    """The requirement lines split into pip download passes that each pin a project once.

    The first pass holds the first line of every project; pass k holds the k-th further
    version of each project that has one, with the first pass's lines for the others,
    so that a second version resolves against the same neighbours (``torch`` stays the
    CPU build the first pass pins) rather than against the newest of everything.
    """
    first: dict[str, str] = {}
    extra: dict[str, list[str]] = {}
    for line in requirements:
        name = canonical_name(line)
        if name in first:
            extra.setdefault(name, []).append(line)
        else:
            first[name] = line
    passes = [list(first.values())]
    for k in range(max((len(lines) for lines in extra.values()), default=0)):
        chosen = {name: lines[k] for name, lines in extra.items() if k < len(lines)}
        passes.append([chosen.get(name, line) for name, line in first.items()])
    return passes


def build_wheelhouse(requirements: list[str], python_version: str) -> Path:
    """The wheelhouse for ``requirements`` on Python ``python_version`` (``3.11``), built
    once and reused while they are unchanged.

    Concurrent callers wait on a file lock; the download lands in a temporary folder
    renamed into place when complete, so an interrupted build leaves nothing half-made.

    Raises:
        RcbError: pip could not download a wheel for every requirement (the message
            names the log).
    """
    key_text = "\n".join([python_version, platform.machine(), *requirements])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:16]

    def download(staging: Path, log: Path) -> None:
        staging.mkdir()
        log.write_text("", encoding="utf-8")
        for lines in download_passes(requirements) if requirements else []:
            argv = [
                sys.executable, "-m", "pip", "download", "--no-input",
                "--disable-pip-version-check", "--only-binary=:all:",
                "--python-version", python_version, "--dest", str(staging), *lines,
            ]  # fmt: skip
            with open(log, "a", encoding="utf-8") as out:
                out.write(f"$ {' '.join(argv)}\n")
                out.flush()
                result = subprocess.run(
                    argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            if result.returncode != 0:
                raise RcbError(
                    f"the wheelhouse for {', '.join(lines)} (Python {python_version}) "
                    f"could not be downloaded; see {log}"
                )
        for wheel in staging.iterdir():
            wheel.chmod(0o644)
        staging.chmod(0o755)

    return build_once(cache_dir("wheelhouses"), key, download)
