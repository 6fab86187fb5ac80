"""requirements/action.txt, the Action's hash-pinned lock, against pyproject.toml: it
must pin every run-time dependency (and the build backend) at a version the
specifier allows, one version each, every pin with a sha256; the slow test in
test_action.py installs from it."""

from __future__ import annotations

import re
import tomllib

from conftest import ROOT
from packaging.requirements import Requirement
from packaging.version import Version

LOCK = ROOT / "requirements" / "action.txt"
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+) --hash=sha256:[0-9a-f]{64}$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for number, line in enumerate(LOCK.read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        found = PIN.match(line)
        assert found, f"{LOCK.name}:{number}: not name==version --hash=sha256:..."
        name = canonical(found.group(1))
        assert name not in pins, f"{LOCK.name}:{number}: {name} pinned twice"
        pins[name] = Version(found.group(2))
    return pins


def test_the_lock_pins_every_dependency_within_its_specifier():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [Requirement(r) for r in project["project"]["dependencies"]]
    wanted += [Requirement(r) for r in project["build-system"]["requires"]]
    pins = locked()
    for requirement in wanted:
        name = canonical(requirement.name)
        assert name in pins, f"{LOCK.name} lacks {name}: run python requirements/lock.py"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{LOCK.name} pins {name}=={pins[name]}, outside {requirement}: "
            "run python requirements/lock.py"
        )
