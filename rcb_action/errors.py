"""Errors a user can cause and fix. Each prints as one line and exits with status 2."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class RcbError(Exception):
    """A user-fixable problem: bad input, unknown model, missing key, no Docker.

    The message is one line that names the file, field or command to fix.
    """


class TaskError(RcbError):
    """A task folder is malformed (schema, tags or files)."""


def format_validation_error(path: str, error: ValidationError) -> str:
    """One line naming the file and the first offending key."""
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"]) or "(top level)"
    kind = first["type"]
    if kind == "extra_forbidden":
        return f"{path}: unknown key '{key}'"
    if kind == "missing":
        return f"{path}: missing required key '{key}'"
    message = first["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if not first["loc"]:  # a rule over several keys: its message names them
        return f"{path}: {message}"
    given = first.get("input")
    shown = "" if isinstance(given, dict | list) else f" (got {given!r})"
    return f"{path}: key '{key}': {message}{shown}"
