"""Task environments: ``tasks/_envs/<name>/requirements.txt``, built once, keyed by hash.

The local backend builds a venv per key under ``$RCB_CACHE_DIR/venvs``; the Docker
backend builds an image ``rcb-env:<name>-<hash>``. Either is reused while the
requirements are unchanged. pip reads its usual configuration (index, extra index,
CA bundle, find-links), so proxied and air-gapped machines work as they do for pip.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
import sys
from pathlib import Path

from rcb_action.errors import RcbError
from rcb_action.paths import build_once, cache_dir

# The harness needs pytest inside every environment; an env may pin its own.
HARNESS_REQUIREMENT = "pytest>=8,<10"


class EnvironmentBuildError(RcbError):
    """An environment failed to build; the message names it and its log."""


def requirements_of(env_dir: Path) -> str:
    text = (env_dir / "requirements.txt").read_text(encoding="utf-8")
    names = {
        line.split("=")[0].split(">")[0].split("<")[0].strip().lower() for line in text.splitlines()
    }
    if "pytest" not in names:
        text = text.rstrip("\n") + f"\n{HARNESS_REQUIREMENT}\n"
    return text


def env_key(env_dir: Path, salt: str = "") -> str:
    """``<name>-<hash>``: the hash covers the requirements and ``salt`` (the base)."""
    digest = hashlib.sha256((requirements_of(env_dir) + "\0" + salt).encode()).hexdigest()[:12]
    return f"{env_dir.name}-{digest}"


@functools.lru_cache(maxsize=8)
def _python_version(python: str) -> str:
    if python == sys.executable:
        return sys.version + "\n"
    return subprocess.run(
        [python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True, check=True
    ).stdout


def build_venv(env_dir: Path, python: str = sys.executable) -> Path:
    """The venv for ``env_dir``, built if missing. Returns its root.

    Concurrent callers wait on a file lock; a build happens in a temporary folder
    and is renamed into place only when complete, so an interrupted build leaves
    nothing half-made behind.

    Raises:
        EnvironmentBuildError: pip failed; the message names the log file.
    """
    version = _python_version(python)
    key = env_key(env_dir, salt=python + version)

    def build(staging: Path, log: Path) -> None:
        requirements = staging.with_suffix(".txt")
        requirements.write_text(requirements_of(env_dir), encoding="utf-8")
        steps = [
            [python, "-m", "venv", str(staging)],
            [
                str(staging / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--no-input",
                "-r",
                str(requirements),
            ],
        ]
        try:
            with open(log, "w") as out:
                for step in steps:
                    out.write(f"$ {' '.join(step)}\n")
                    out.flush()
                    result = subprocess.run(
                        step, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                    )
                    if result.returncode != 0:
                        raise EnvironmentBuildError(
                            f"environment '{env_dir.name}' failed to build ({env_dir / 'requirements.txt'}); see {log}"
                        )
        finally:
            requirements.unlink(missing_ok=True)

    return build_once(cache_dir("venvs"), key, build)
