"""Task environments: ``tasks/_envs/<name>/requirements.txt``, built once, keyed by hash.

The local backend builds a venv per key under ``$RCB_CACHE_DIR/venvs``; the Docker
backend builds an image ``rcb-env:<name>-<hash>``. Either is reused while the
requirements are unchanged.

A task's requirements come from a pull request, so building one runs no package
code on this machine. The requirements are pinned index names only (see
:func:`rcb_action.tasks.read_requirements`), and pip gets them in canonical form,
never the task's file. A local venv is built in three steps:

1. ``python -m venv`` (the standard library only);
2. ``pip download --only-binary=:all:`` on this machine, with pip's own
   configuration (index, extra index, CA bundle, find-links, constraints), so
   proxied and air-gapped machines work as they do for pip: it fetches wheels and
   runs none; a package with only a source distribution fails here, since
   building one runs its code;
3. ``pip install --no-index`` from those wheels inside bubblewrap: no network, a
   cleared environment (no API key), a read-only root with only the staging venv
   writable, as an unprivileged uid. The venv is built at the folder it is then
   renamed from, as before; the sandboxes bind it read-only at its final path.

Without bubblewrap as root, step 3 runs as a plain subprocess with the cleared
environment and a loud warning (it still installs wheels only, so no package code
runs; pip itself is not confined).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from rcb_action.errors import RcbError
from rcb_action.paths import build_once, cache_dir
from rcb_action.tasks import read_requirements

# The harness needs pytest inside every environment; an env may pin its own.
HARNESS_REQUIREMENT = "pytest>=8,<10"
# The uid of step 3, below the sandboxes' uids (200000 and up, see _local.py).
BUILD_UID = 199_999
WHEELS_ONLY = (
    "every package needs a wheel for this platform on the index or in pip's find-links "
    "(rcb never builds a source distribution: building one runs its code)"
)
_warned_unconfined = False
_warn_lock = threading.Lock()


class EnvironmentBuildError(RcbError):
    """An environment failed to build; the message names it and its log."""


def canonical_name(requirement: str) -> str:
    """The normalised project name of a requirement line (``Foo_Bar[x]==1`` -> ``foo-bar``),
    as pip compares names."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\[=<>!~;\s]", requirement, maxsplit=1)[0]).lower()


def requirements_of(env_dir: Path) -> str:
    """What pip installs for ``env_dir``: its checked pins, one a line in canonical
    form, and the harness's pytest unless the environment pins its own.

    Raises:
        TaskError: ``requirements.txt:line`` is not a pinned index package, or the
            file is a link or not UTF-8.
    """
    pins = read_requirements(env_dir / "requirements.txt")
    if "pytest" not in {canonical_name(pin) for pin in pins}:
        pins.append(HARNESS_REQUIREMENT)
    return "\n".join(pins) + "\n"


def env_key(env_dir: Path, salt: str = "") -> str:
    """``<name>-<hash>``: the hash covers the requirements and ``salt`` (the base).

    Raises:
        TaskError: the requirements are not pinned index packages.
    """
    digest = hashlib.sha256((requirements_of(env_dir) + "\0" + salt).encode()).hexdigest()[:12]
    return f"{env_dir.name}-{digest}"


@functools.lru_cache(maxsize=8)
def _python_facts(python: str) -> tuple[str, str]:
    """``(sys.version, sys.base_prefix)`` of ``python``."""
    if python == sys.executable:
        return sys.version + "\n", sys.base_prefix
    out = subprocess.run(
        [
            python,
            "-c",
            "import json, sys; print(json.dumps([sys.version + '\\n', sys.base_prefix]))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    version, prefix = json.loads(out)
    return str(version), str(prefix)


def build_confined() -> bool:
    """Whether step 3 runs inside bubblewrap: it needs ``bwrap`` and ``setpriv`` and root."""
    return bool(shutil.which("bwrap")) and bool(shutil.which("setpriv")) and os.geteuid() == 0


def _warn_unconfined() -> None:
    global _warned_unconfined
    with _warn_lock:
        if _warned_unconfined:
            return
        _warned_unconfined = True
    bar = "!" * 78
    print(
        f"{bar}\nrcb WARNING: environment builds are not confined (bubblewrap as root is needed).\n"
        "pip installs the downloaded wheels as a plain subprocess of this user, with a cleared "
        "environment;\nno package code runs (wheels only), but pip itself is not sandboxed.\n"
        f"{bar}",
        file=sys.stderr,
        flush=True,
    )


def build_env() -> dict[str, str]:
    """The whole environment of the install step: no host variable but the locale."""
    env = {key: os.environ[key] for key in ("LANG", "LC_ALL") if key in os.environ}
    env.update(
        {
            "PATH": "/usr/bin:/bin",
            "HOME": "/tmp",
            # os.devnull makes pip skip every configuration file: the wheels are all it needs.
            "PIP_CONFIG_FILE": os.devnull,
            "PYTHONNOUSERSITE": "1",
        }
    )
    return env


def bwrap_system(bwrap: str) -> list[str]:
    """The start of every bubblewrap command rcb runs: new IPC, PID, network, UTS and
    cgroup namespaces, killed with its parent, a session of its own, and the host's
    system folders (``/usr``, ``/etc``, ``/bin``, ``/lib``, ...) read-only, links kept."""
    cmd = [
        bwrap,
        "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
        "--die-with-parent", "--new-session",
        "--ro-bind", "/usr", "/usr",
        "--ro-bind", "/etc", "/etc",
    ]  # fmt: skip
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    return cmd


def build_sandbox(
    argv: list[str], *, writable: Path, readable: list[Path], python_prefix: str
) -> list[str]:
    """``argv`` wrapped in bubblewrap for a build step (root only, see :func:`build_confined`).

    The command sees a read-only system, the Python it was made from, ``readable``
    read-only and ``writable`` writable, each at its own path; a private ``/tmp``,
    ``/proc`` and ``/dev``; no network; no variable but :func:`build_env`'s; and it
    runs as :data:`BUILD_UID` without capabilities.
    """
    cmd = bwrap_system(shutil.which("bwrap") or "bwrap")
    # /tmp first: the staging folder may live under it and is bound on top.
    cmd += ["--perms", "1777", "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    made: set[str] = {"/", "/tmp", "/usr"}
    binds = [(str(Path(python_prefix).resolve()), "--ro-bind")]
    binds += [(str(path), "--ro-bind") for path in readable]
    binds += [(str(writable), "--bind")]
    for path, how in binds:
        if path.startswith("/usr/"):
            continue
        # bubblewrap makes missing parents 0700, which the build user could not cross.
        for parent in reversed(Path(path).parents):
            if str(parent) not in made:
                made.add(str(parent))
                cmd += ["--perms", "0755", "--dir", str(parent)]
        cmd += [how, path, path]
    cmd += ["--chdir", str(writable), "--clearenv"]
    for key, value in build_env().items():
        cmd += ["--setenv", key, value]
    cmd += ["setpriv", f"--reuid={BUILD_UID}", f"--regid={BUILD_UID}", "--clear-groups"]
    cmd += ["--inh-caps=-all", "--bounding-set=-all", "--"]
    return cmd + argv


def _own(folder: Path, uid: int, gid: int) -> None:
    """``folder`` and everything in it owned by ``uid:gid``; no set-id bit survives."""
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, uid, gid, follow_symlinks=False)
        mode = os.lstat(path).st_mode
        if not stat.S_ISLNK(mode) and mode & (stat.S_ISUID | stat.S_ISGID):
            os.chmod(path, stat.S_IMODE(mode) & ~(stat.S_ISUID | stat.S_ISGID))


def _step(out: IO[str], argv: list[str], *, env: dict[str, str], cwd: Path) -> bool:
    out.write(f"$ {' '.join(argv)}\n")
    out.flush()
    result = subprocess.run(
        argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=cwd
    )
    out.write("\n")
    return result.returncode == 0


def build_venv(env_dir: Path, python: str = sys.executable) -> Path:
    """The venv for ``env_dir``, built if missing (see the module's three steps).
    Returns its root.

    Concurrent callers wait on a file lock; a build happens in a temporary folder
    and is renamed into place only when complete, so an interrupted build leaves
    nothing half-made behind.

    Raises:
        TaskError: the requirements are not pinned index packages (``file:line``).
        EnvironmentBuildError: a step failed (a package without a wheel, a version
            the index lacks); the message names the environment and the log.
    """
    version, prefix = _python_facts(python)
    requirements = requirements_of(env_dir)
    key = env_key(env_dir, salt=python + version)
    confined = build_confined()
    if not confined:
        _warn_unconfined()

    def failed(log: Path, why: str) -> EnvironmentBuildError:
        return EnvironmentBuildError(
            f"environment '{env_dir.name}' failed to build ({env_dir / 'requirements.txt'}): "
            f"{why}; see {log}"
        )

    def build(staging: Path, log: Path) -> None:
        listed = staging.with_name(staging.name + ".txt")
        wheels = staging.with_name(staging.name + ".wheels")
        shutil.rmtree(wheels, ignore_errors=True)
        wheels.mkdir(mode=0o755)
        listed.write_text(requirements, encoding="utf-8")
        listed.chmod(0o644)
        pip = [str(staging / "bin" / "python"), "-m", "pip"]
        quiet = ["--no-input", "--disable-pip-version-check", "--progress-bar", "off"]
        install = [*pip, "install", *quiet, "--no-index", "--find-links", str(wheels)]
        install += ["--only-binary=:all:", "--no-cache-dir", "-r", str(listed)]
        try:
            with open(log, "w", encoding="utf-8") as out:
                if not _step(
                    out, [python, "-m", "venv", str(staging)], env=build_env(), cwd=wheels
                ):
                    raise failed(log, "python -m venv failed")
                download = [*pip, "download", *quiet, "--only-binary=:all:"]
                download += ["--dest", str(wheels), "-r", str(listed)]
                # pip's own configuration applies here (index, find-links, CA bundle).
                if not _step(out, download, env=dict(os.environ), cwd=wheels):
                    raise failed(
                        log, f"pip could not download a wheel for every requirement; {WHEELS_ONLY}"
                    )
                for wheel in wheels.iterdir():
                    wheel.chmod(0o644)
                if confined:
                    _own(staging, BUILD_UID, BUILD_UID)
                    install = build_sandbox(
                        install, writable=staging, readable=[wheels, listed], python_prefix=prefix
                    )
                if not _step(out, install, env=build_env(), cwd=staging):
                    raise failed(log, "pip install from the downloaded wheels failed")
        finally:
            if confined and staging.exists():
                _own(staging, os.geteuid(), os.getegid())
            listed.unlink(missing_ok=True)
            shutil.rmtree(wheels, ignore_errors=True)

    return build_once(cache_dir("venvs"), key, build)
