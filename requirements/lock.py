"""Write requirements/action.txt: every package rcb needs at run time, pinned to one
version with the sha256 of its file, for the Action's own venv (pip --require-hashes).

    python requirements/lock.py            # rewrite the lock
    python requirements/lock.py --check    # exit 1 if the lock is out of date

pip resolves the closure of pyproject.toml's dependencies for the running Python and
platform (the Action's default: CPython 3.11 on Linux x86_64, GitHub's ubuntu runners)
without installing anything (``pip install --dry-run --report``), and reports the hash
of each file it chose. Run it with the Action's Python version after changing a
dependency; Dependabot's pip updates go through pyproject.toml.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "action.txt"
# rcb itself is built from the Action's checkout without build isolation, so that its
# build backend too comes from the lock (pyproject.toml's build-system.requires).
BUILD = ["setuptools>=68", "wheel"]


def resolve() -> list[tuple[str, str, str]]:
    """(name, version, sha256) of every distribution rcb's install pulls in, rcb excluded."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed",
             "--report", str(report), str(ROOT), *BUILD],
            check=True,
        )  # fmt: skip
        installs = json.loads(report.read_text())["install"]
    pins = []
    for item in installs:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if name == "rcb":
            continue
        digest = item["download_info"].get("archive_info", {}).get("hashes", {}).get("sha256")
        if not digest:
            sys.exit(f"lock: pip reported no sha256 for {name} {version}")
        pins.append((name.lower(), version, digest))
    return sorted(pins)


def render(pins: list[tuple[str, str, str]]) -> str:
    where = f"CPython {platform.python_version()} on {sys.platform} {platform.machine()}"
    lines = [
        "# rcb's run-time dependencies, pinned with hashes for the Action's own venv.",
        f"# Written by `python requirements/lock.py` ({where}); do not edit by hand.",
    ]
    lines += [f"{name}=={version} --hash=sha256:{digest}" for name, version, digest in pins]
    return "\n".join(lines) + "\n"


def pinned_names(text: str) -> dict[str, str]:
    """name -> version of each pin in a lock file's text."""
    pins = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            spec = line.split()[0]
            name, version = spec.split("==")
            pins[name] = version
    return pins


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the lock is out of date")
    args = parser.parse_args()
    text = render(resolve())
    if args.check:
        current = LOCK.read_text() if LOCK.is_file() else ""
        if pinned_names(current) != pinned_names(text):
            print(f"{LOCK.relative_to(ROOT)} is out of date: run python requirements/lock.py")
            return 1
        return 0
    LOCK.write_text(text)
    print(f"wrote {LOCK.relative_to(ROOT)}: {text.count('--hash')} packages")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
