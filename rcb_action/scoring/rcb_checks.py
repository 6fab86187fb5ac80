"""pytest plugin run inside the check sandbox (B): the outputs of the cases as fixtures.

Loaded with ``-p rcb_checks``. Two session fixtures:

- ``outputs``: what this attempt's cases returned (``RCB_CANDIDATE_DIR``);
- ``reference``: what the reference code's cases returned (``RCB_REFERENCE_DIR``).

Each maps a case name to its value: plain data as the case runner wrote it
(``rcb_cases.py``), arrays loaded from ``arrays.npz`` with ``allow_pickle=False``.
A case that raised, that is missing, or whose code did not compile raises
:class:`CaseFailed` when a check asks for it, naming the original exception's
class so the harness can classify the failure.

Which cases each check read (itself or through its fixtures, whatever their
scope) is written into the junit report as the test's ``rcb_cases`` property: the
harness reads it off the reference's run to run only those cases for a snippet.
Asking for the list of names counts as reading every case (``*``).

No code of the model's is in this sandbox; the candidate's files are untrusted
data, read as JSON and arrays only. This file has no rcb imports.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

import pytest

ARRAY_KEY = "__rcb_array__"
FLOAT_KEY = "__rcb_float__"
_ARRAY_NAME = re.compile(r"^a\d{1,7}$")
_FLOATS = {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


# Who is reading now (a fixture's name, else a test's node id), and what each read.
_readers: list[str] = []
_reads: dict[str, set[str]] = {}


def _record(name: str) -> None:
    if _readers:
        _reads.setdefault(_readers[-1], set()).add(name)


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    _readers.append(f"fixture:{fixturedef.argname}")
    try:
        yield
    finally:
        _readers.pop()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _readers.append(item.nodeid)
    try:
        yield
    finally:
        _readers.pop()
        read = set(_reads.get(item.nodeid, ()))
        for fixture in getattr(item, "fixturenames", ()):
            read |= _reads.get(f"fixture:{fixture}", set())
        item.user_properties.append(("rcb_cases", json.dumps(sorted(read))))


class CaseFailed(Exception):
    """A check asked for a case that has no value: it raised, was missing, or the
    code under test did not compile. The message starts with the original class."""


class CaseOutputs:
    """The outputs of one run of the cases, read lazily."""

    def __init__(self, folder: str, label: str) -> None:
        self.folder = folder
        self.label = label
        self._data: dict[str, Any] | None = None
        self._arrays: object = None

    def _load(self) -> dict[str, Any]:
        if self._data is None:
            path = os.path.join(self.folder, "outputs.json")
            try:
                with open(path, encoding="utf-8") as handle:
                    data = json.load(handle)
            except FileNotFoundError:
                raise CaseFailed(f"RuntimeError: the {self.label} cases wrote no outputs") from None
            except (ValueError, RecursionError) as exc:
                raise CaseFailed(
                    f"ValueError: the {self.label} outputs are not valid JSON ({exc})"
                ) from None
            if not isinstance(data, dict) or not isinstance(data.get("cases"), dict):
                raise CaseFailed(f"ValueError: the {self.label} outputs have no cases")
            self._data = data
        return self._data

    def _array(self, name: object) -> object:
        if not isinstance(name, str) or not _ARRAY_NAME.match(name):
            raise CaseFailed(
                f"ValueError: bad array reference {name!r} in the {self.label} outputs"
            )
        if self._arrays is None:
            import numpy as np

            path = os.path.join(self.folder, "arrays.npz")
            if not os.path.isfile(path):
                raise CaseFailed(f"ValueError: the {self.label} outputs hold no arrays")
            self._arrays = np.load(path, allow_pickle=False)
        try:
            return self._arrays[name]  # type: ignore[index]
        except KeyError:
            raise CaseFailed(
                f"ValueError: array {name} is missing from the {self.label} outputs"
            ) from None

    def _decode(self, value: object, depth: int = 0) -> object:
        if depth > 200:
            raise CaseFailed(f"ValueError: the {self.label} outputs are nested too deeply")
        if isinstance(value, list):
            return [self._decode(item, depth + 1) for item in value]
        if isinstance(value, dict):
            if set(value) == {ARRAY_KEY}:
                return self._array(value[ARRAY_KEY])
            if set(value) == {FLOAT_KEY}:
                text = value[FLOAT_KEY]
                if text not in _FLOATS:
                    raise CaseFailed(f"ValueError: bad float {text!r} in the {self.label} outputs")
                return _FLOATS[text]
            return {key: self._decode(item, depth + 1) for key, item in value.items()}
        return value

    def names(self) -> list[str]:
        """The names of the cases that ran."""
        _record("*")
        return sorted(self._load()["cases"])

    def __contains__(self, name: object) -> bool:
        _record(name if isinstance(name, str) else "*")
        return name in self._load()["cases"]

    def __getitem__(self, name: str) -> object:
        _record(name if isinstance(name, str) else "*")
        data = self._load()
        compile_error = data.get("compile_error")
        if isinstance(compile_error, dict):
            raise CaseFailed(
                f"{compile_error.get('type', 'SyntaxError')}: the code does not compile: "
                f"{compile_error.get('message', '')}"
            )
        entry = data["cases"].get(name)
        if not isinstance(entry, dict):
            modules = data.get("modules")
            if isinstance(modules, dict):
                for module, info in sorted(modules.items()):
                    error = info.get("error") if isinstance(info, dict) else None
                    if isinstance(error, dict):
                        raise CaseFailed(
                            f"{error.get('type', 'Exception')}: importing {module} failed: "
                            f"{error.get('message', '')}"
                        )
            raise CaseFailed(f"RuntimeError: case '{name}' has no {self.label} output")
        if "error" in entry:
            error = entry["error"] if isinstance(entry["error"], dict) else {}
            raise CaseFailed(
                f"{error.get('type', 'Exception')}: case '{name}' raised: {error.get('message', '')}"
            )
        if "value" not in entry:
            raise CaseFailed(f"RuntimeError: case '{name}' has no {self.label} value")
        return self._decode(entry["value"])


@pytest.fixture(scope="session")
def outputs() -> CaseOutputs:
    """This attempt's case outputs."""
    return CaseOutputs(os.environ.get("RCB_CANDIDATE_DIR", "candidate"), "candidate")


@pytest.fixture(scope="session")
def reference() -> CaseOutputs:
    """The reference code's case outputs."""
    return CaseOutputs(os.environ.get("RCB_REFERENCE_DIR", "reference"), "reference")
