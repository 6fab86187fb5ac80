"""An environment's ``requirements.txt``: package names from the index, pinned, nothing else.

A requirements file is a program for pip: a path, a URL, a VCS link or an option
(``-e .``, ``-r``, ``--index-url``) makes pip fetch and build code the task chose,
and building runs that code. So a line may only be ``name==version`` (extras and
simple environment markers allowed), comments and blank lines aside. pip never
reads the task's file: the builders write the checked requirements in a canonical
form, one per line, so pip's own line rules (continuations, ``${VAR}``
expansion, encoding declarations) cannot read a line differently from this check.
"""

from __future__ import annotations

import re
from pathlib import Path

from rcb_action.errors import TaskError
from rcb_action.tasks._plain import read_plain_file

_EXAMPLE = "write name==version, e.g. numpy==2.2.6"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
# PEP 440 (packaging's VERSION_PATTERN), no wildcard: a pin names one release.
_VERSION = r"""
    v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*
    (?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?
    (?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?
    (?:[-_.]?dev[-_.]?[0-9]*)?
    (?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?
"""
_PINNED = re.compile(
    rf"""(?P<name>{_NAME})\s*
    (?:\[\s*(?P<extras>{_NAME}(?:\s*,\s*{_NAME})*)\s*\])?\s*
    ==\s*(?P<version>{_VERSION})\s*
    (?:;(?P<marker>.*))?""",
    re.VERBOSE | re.IGNORECASE | re.ASCII,
)
# What a pin would look like with another operator, or none: said as "not pinned".
_SPECIFIED = re.compile(
    rf"(?P<name>{_NAME})\s*(?:\[[^\]]*\])?\s*(?:(?P<op>===|~=|==|!=|<=|>=|<|>)(?P<rest>[^;]*))?(?:;.*)?",
    re.ASCII,
)
# pip reads a name ending like an archive as a file in its working folder.
_ARCHIVE = re.compile(r"\.(?:zip|whl|tbz|txz|tlz|tgz|tar|tar\.(?:gz|bz2|xz|lz|lzma))$", re.I)
# pip's comment rule, so a line means here what it would mean to pip.
_COMMENT = re.compile(r"(^|\s+)#.*$")
_MARKER_VARIABLES = (
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
)
_MARKER_TOKEN = re.compile(
    rf"""\s*(?:
      (?P<value>(?:{"|".join(_MARKER_VARIABLES)})\b|'[\w .*+!<>=~,-]*'|"[\w .*+!<>=~,-]*")
    | (?P<op>===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)
    | (?P<join>and\b|or\b)
    | (?P<paren>[()])
    )""",
    re.VERBOSE | re.ASCII,
)


def _marker_tokens(marker: str) -> list[tuple[str, str]] | None:
    tokens: list[tuple[str, str]] = []
    at = 0
    while marker[at:].strip():
        match = _MARKER_TOKEN.match(marker, at)
        if not match or match.lastgroup is None:
            return None
        kind, value = match.lastgroup, match[match.lastgroup]
        tokens.append((kind, " ".join(value.split()) if kind == "op" else value))
        at = match.end()
    return tokens


def _marker_is_simple(tokens: list[tuple[str, str]]) -> bool:
    """``expr := term (and|or term)*``, ``term := ( expr ) | value op value``."""
    at = 0

    def expression() -> bool:
        nonlocal at
        if not term():
            return False
        while at < len(tokens) and tokens[at][0] == "join":
            at += 1
            if not term():
                return False
        return True

    def term() -> bool:
        nonlocal at
        if at < len(tokens) and tokens[at] == ("paren", "("):
            at += 1
            if not expression() or at >= len(tokens) or tokens[at] != ("paren", ")"):
                return False
            at += 1
            return True
        kinds = [kind for kind, _ in tokens[at : at + 3]]
        if kinds != ["value", "op", "value"]:
            return False
        at += 3
        return True

    return bool(tokens) and expression() and at == len(tokens)


def pinned_requirement(line: str) -> str | None:
    """One requirements line in canonical form (``name[extras]==version ; marker``),
    or ``None`` for a blank or comment line.

    Raises:
        ValueError: the line is anything but a pinned index package; the message
            says what it is and what to write instead.
    """
    if line.endswith("\\") and not _COMMENT.match(line):
        raise ValueError("a line continuation: write one requirement per line")
    text = _COMMENT.sub("", line).strip()
    if not text:
        return None
    shown = text if len(text) <= 80 else text[:77] + "..."
    if text.startswith("-") or re.search(r"\s-", text):
        raise ValueError(
            f"'{shown}' is a pip option: list pinned packages only ({_EXAMPLE}); the index "
            "and find-links come from pip's configuration"
        )
    if "$" in text:
        raise ValueError(f"'{shown}' names an environment variable: write the version out")
    if "@" in text or "://" in text or "/" in text or "\\" in text or text.startswith((".", "~")):
        raise ValueError(
            f"'{shown}' is a path, URL or direct reference: name a package on the index "
            f"instead ({_EXAMPLE}); rcb installs wheels from the index only"
        )
    match = _PINNED.fullmatch(text)
    if match is None:
        spec = _SPECIFIED.fullmatch(text)
        if spec and (
            spec["op"] in (None, "===", "~=", "!=", "<=", ">=", "<", ">")
            or any(c in spec["rest"] for c in "*,")
        ):
            raise ValueError(
                f"'{shown}' is not pinned: write {spec['name']}==<version> (one exact release)"
            )
        raise ValueError(f"'{shown}' is not a pinned index package: {_EXAMPLE}")
    if _ARCHIVE.search(match["version"]):
        raise ValueError(f"'{shown}': a version cannot end like an archive file name")
    out = match["name"]
    if match["extras"]:
        out += "[" + ",".join(e.strip() for e in match["extras"].split(",")) + "]"
    out += "==" + match["version"]
    if match["marker"] is not None:
        tokens = _marker_tokens(match["marker"])
        if tokens is None or not _marker_is_simple(tokens):
            raise ValueError(
                f"'{shown}': environment marker '{match['marker'].strip()}' is not one rcb "
                f"reads; compare {', '.join(_MARKER_VARIABLES[:4])}, ... with quoted values, "
                "joined by and/or"
            )
        out += " ; " + " ".join(value for _, value in tokens)
    return out


def read_requirements(path: Path) -> list[str]:
    """The requirements of ``path``, checked, in canonical form, in file order.

    Raises:
        TaskError: ``path:line: ...`` for the first line that is not a pinned
            index package, naming what to write instead; or the file is not a
            plain UTF-8 file.
        FileNotFoundError: ``path`` does not exist.
    """
    data = read_plain_file(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TaskError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None
    found: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        try:
            requirement = pinned_requirement(line)
        except ValueError as exc:
            raise TaskError(f"{path}:{number}: {exc}") from None
        if requirement is not None:
            found.append(requirement)
    return found
