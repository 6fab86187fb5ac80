"""pytest plugin run inside the sandbox: records each test's outcome and signs it.

It is loaded with ``-p rcb_verdict`` before any test module (and so before any
model-written code) is imported. At import it reads a per-run key from stdin and
snapshots the identity of the pytest internals that decide outcomes. At the end
of the session it writes the outcomes, the list of internals that were replaced
(tampering), and an HMAC of both to the path the harness gave it. The harness
trusts a pass only when the MAC checks out, nothing was tampered with, pytest's
exit status is 0 and every expected test id passed. This file has no rcb
imports: it runs in the task's environment, not the harness's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys

# The pytest internals that decide an outcome, and a few tools the verdict needs.
# Missing names (other pytest versions) are skipped; class attributes are read
# from the class __dict__, since classmethods and properties make a new object
# on every attribute access.
_WATCHED = (
    "_pytest.runner:runtestprotocol",
    "_pytest.runner:call_and_report",
    "_pytest.runner:call_runtest_hook",
    "_pytest.runner:pytest_runtest_makereport",
    "_pytest.runner:CallInfo.from_call",
    "_pytest.reports:TestReport.from_item_and_call",
    "_pytest.reports:TestReport.__init__",
    "_pytest.reports:BaseReport.passed",
    "_pytest.reports:BaseReport.failed",
    "_pytest.python:Function.runtest",
    "_pytest.python:pytest_pyfunc_call",
    "_pytest.main:pytest_runtestloop",
    "_pytest.junitxml:LogXML.pytest_runtest_logreport",
    "_pytest.junitxml:LogXML.pytest_sessionfinish",
    "hmac:new",
    "json:dumps",
    "builtins:open",
)


def _watched() -> dict[str, object]:
    import importlib

    found: dict[str, object] = {}
    for spec in _WATCHED:
        module_name, _, path = spec.partition(":")
        try:
            obj: object = importlib.import_module(module_name)
        except ImportError:
            continue
        parts = path.split(".")
        for part in parts[:-1]:
            obj = getattr(obj, part, None)
        holder = vars(obj) if isinstance(obj, type) else getattr(obj, "__dict__", {})
        if parts[-1] in holder:
            found[spec] = holder[parts[-1]]
    return found


def _plugin_origin(plugin: object) -> str:
    """The module a plugin (a module, a class or an instance) comes from."""
    if isinstance(plugin, type(sys)):
        return getattr(plugin, "__name__", "?")
    if isinstance(plugin, type):
        return plugin.__module__
    return type(plugin).__module__


def _legitimate(plugin: object, rootdir: str) -> bool:
    """pytest's own plugins and the task's conftest files; anything else came from the code under test."""
    origin = _plugin_origin(plugin)
    if origin.startswith(("_pytest", "pytest", "pluggy", "rcb_verdict")):
        return True
    path = getattr(plugin, "__file__", None) or ""
    return path.endswith("conftest.py") and os.path.realpath(path).startswith(rootdir)


class _Recorder:
    def __init__(self, key: bytes, out: str) -> None:
        self._key = key
        self._out = out
        self._snapshot = {name: id(obj) for name, obj in _watched().items()}
        self._results: dict[str, str] = {}
        self._errors: list[str] = []
        self._plugins: set[int] = set()
        self._rootdir = ""

    def remember_plugins(self, config) -> None:
        self._plugins = {id(p) for p in config.pluginmanager.get_plugins()}
        self._rootdir = os.path.realpath(str(config.rootpath))

    def pytest_runtest_logreport(self, report) -> None:
        previous = self._results.get(report.nodeid, "passed")
        if report.outcome == "failed":
            outcome = "failed" if report.when == "call" else "error"
        elif report.outcome == "skipped" and previous == "passed":
            outcome = "skipped"
        else:
            outcome = previous
        self._results[report.nodeid] = outcome

    def pytest_collectreport(self, report) -> None:
        if report.outcome == "failed":
            self._errors.append(report.nodeid or "<session>")

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        tampered = sorted(
            name for name, obj in _watched().items() if id(obj) != self._snapshot.get(name)
        )
        # A plugin registered after start-up that is neither pytest's nor a conftest
        # was registered by the code under test (e.g. to rewrite reports).
        tampered += sorted(
            f"plugin from {_plugin_origin(p)}"
            for p in session.config.pluginmanager.get_plugins()
            if id(p) not in self._plugins and not _legitimate(p, self._rootdir)
        )
        body = json.dumps(
            {
                "results": self._results,
                "collect_errors": self._errors,
                "exitstatus": int(exitstatus),
                "tampered": tampered,
            },
            sort_keys=True,
        )
        mac = hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()
        with open(self._out, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({"body": body, "mac": mac}))


def pytest_configure(config) -> None:
    config.pluginmanager.register(_RECORDER, "rcb-verdict-recorder")
    _RECORDER.remember_plugins(config)


_KEY = sys.stdin.buffer.readline().strip()
# Proof that the sandbox started pytest: without it a missing verdict is the harness's
# failure, not the model's. Printed before any model code loads, so it cannot be faked.
sys.stderr.write(
    f"rcb-verdict: started {hmac.new(_KEY, b'started', hashlib.sha256).hexdigest()[:16]}\n"
)
sys.stderr.flush()
_RECORDER = _Recorder(_KEY, os.environ.pop("RCB_VERDICT_PATH", "verdict.json"))
