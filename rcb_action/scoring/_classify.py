"""Failure classes, decided from the run itself (junit report, exit status), never by an LLM."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Literal

FailureClass = Literal[
    "no_code",
    "syntax",
    "import",
    "name",
    "attribute",
    "type",
    "value",
    "index_key",
    "assertion",
    "runtime_other",
    "timeout",
    "memory",
    "sandbox_violation",
    "harness_error",
]
FAILURE_CLASSES: tuple[str, ...] = FailureClass.__args__  # type: ignore[attr-defined]

_BY_EXCEPTION: dict[str, FailureClass] = {
    "SyntaxError": "syntax",
    "IndentationError": "syntax",
    "TabError": "syntax",
    "ImportError": "import",
    "ModuleNotFoundError": "import",
    "NameError": "name",
    "UnboundLocalError": "name",
    "AttributeError": "attribute",
    "TypeError": "type",
    "ValueError": "value",
    "IndexError": "index_key",
    "KeyError": "index_key",
    "AssertionError": "assertion",
    "MemoryError": "memory",
    "RecursionError": "runtime_other",
}
_EXC_AT_START = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Exit|Interrupt|Warning))\b")
# pytest ends each traceback with "path:line: ExceptionName" (its reprcrash).
_EXC_AT_LOCATION = re.compile(
    r"^\S+:\d+: (?:[\w.]+\.)?(\w+(?:Error|Exception|Exit|Interrupt))\s*$", re.M
)
_EXC_IN_TRACE = re.compile(r"^E\s+(?:[\w.]+\.)?(\w+(?:Error|Exception|Exit))\b", re.M)


def classify_exception(name: str | None) -> FailureClass:
    if not name:
        return "runtime_other"
    return _BY_EXCEPTION.get(name, "runtime_other")


@dataclass(frozen=True)
class JunitCase:
    """One ``<testcase>`` of a junit report."""

    nodeid: str
    outcome: Literal["passed", "failed", "error", "skipped"]
    exception: str | None
    message: str
    # <properties>: what the test recorded (``rcb_cases``: the cases a check read).
    properties: dict[str, str] = field(default_factory=dict)


def _nodeid(case: ET.Element) -> str:
    classname = case.get("classname", "")
    name = case.get("name", "")
    file = case.get("file")
    if not file:
        return f"{classname}::{name}" if classname else name
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    classes = classname[len(module) :].lstrip(".") if classname.startswith(module) else ""
    parts = [file, *(c for c in classes.split(".") if c), name]
    return "::".join(parts)


def _exception_of(element: ET.Element) -> str | None:
    located = _EXC_AT_LOCATION.findall(element.text or "")
    if located:
        return located[-1]
    message = element.get("message", "") or ""
    match = _EXC_AT_START.match(message.strip())
    if match:
        return match.group(1)
    found = _EXC_IN_TRACE.findall(element.text or "")
    return found[-1] if found else None


def parse_junit(xml_text: str) -> list[JunitCase]:
    """The test cases of a pytest junit report (``junit_family=xunit1``).

    Raises:
        ValueError: the report is not well-formed XML.
    """
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ValueError(f"junit report is not valid XML: {exc}") from exc
    cases = []
    for case in root.iter("testcase"):
        outcome: Literal["passed", "failed", "error", "skipped"] = "passed"
        exception = None
        message = ""
        properties = {
            str(prop.get("name")): prop.get("value") or ""
            for prop in case.iter("property")
            if prop.get("name")
        }
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                exception = _exception_of(child)
                message = (child.get("message") or "").strip()
                break
            if child.tag == "skipped":
                outcome = "skipped"
        cases.append(JunitCase(_nodeid(case), outcome, exception, message, properties))
    return cases


def exception_in_output(text: str) -> str | None:
    """The last ``E   SomeError`` line of pytest's output, for runs with no report."""
    found = _EXC_IN_TRACE.findall(text)
    return found[-1] if found else None
