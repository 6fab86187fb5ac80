"""The runner's file and log protocol: step outputs, the job summary, annotations.

GitHub Actions reads a step's outputs from the file named by ``GITHUB_OUTPUT``,
its Markdown job summary from ``GITHUB_STEP_SUMMARY``, and annotations from
``::error file=...,line=...::message`` lines on stdout. Outside Actions (no such
variables) outputs print as ``name=value`` lines and the summary is not written,
so every ``rcb gh`` command also runs on a laptop.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TextIO

Level = Literal["error", "warning", "notice"]

# A comment or a summary longer than this is refused by GitHub (65,536 characters).
MAX_MARKDOWN_CHARS = 65_000


def escape_data(text: str) -> str:
    """Escape an annotation's message (GitHub's ``escapeData``)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape an annotation property such as ``file`` (GitHub's ``escapeProperty``)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workspace_path(path: str, workspace: str | os.PathLike[str] | None = None) -> str:
    """``path`` relative to the repository root, the form annotations attach to a diff.

    The root is ``workspace``, else ``$GITHUB_WORKSPACE``, else the current folder.
    A path outside it is returned unchanged.
    """
    if not path:
        return path
    root = Path(workspace or os.environ.get("GITHUB_WORKSPACE") or Path.cwd()).resolve()
    candidate = Path(path)
    absolute = candidate if candidate.is_absolute() else Path.cwd() / candidate
    try:
        return absolute.resolve().relative_to(root).as_posix()
    except ValueError:
        return path


def annotation(
    level: Level,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    title: str | None = None,
) -> str:
    """One workflow-command line, e.g. ``::error file=tasks/x/task.yaml,line=3::msg``."""
    props = []
    if file:
        props.append(f"file={escape_property(workspace_path(file))}")
        if line:
            props.append(f"line={int(line)}")
    if title:
        props.append(f"title={escape_property(title)}")
    head = f"::{level}" + (" " + ",".join(props) if props else "")
    return f"{head}::{escape_data(message)}"


def _delimiter(values: Mapping[str, str]) -> str:
    while True:
        marker = f"ghadelimiter_{uuid.uuid4().hex}"
        if not any(marker in value for value in values.values()):
            return marker


def set_outputs(
    values: Mapping[str, str], *, path: str | None = None, stream: TextIO | None = None
) -> None:
    """Write step outputs to ``$GITHUB_OUTPUT`` (multi-line values are delimited).

    Without ``GITHUB_OUTPUT`` they print as ``name=value`` lines, for a person to read.
    """
    target = path if path is not None else os.environ.get("GITHUB_OUTPUT")
    if not target:
        out = stream or sys.stdout
        for name, value in values.items():
            out.write(f"{name}={value}\n")
        return
    delimiter = _delimiter(values)
    with open(target, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            if "\n" in value:
                handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
            else:
                handle.write(f"{name}={value}\n")


def append_summary(markdown: str, *, path: str | None = None) -> bool:
    """Append Markdown to the job summary; False when there is none (not in Actions)."""
    target = path if path is not None else os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return False
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(clip_markdown(markdown))
        if not markdown.endswith("\n"):
            handle.write("\n")
    return True


def clip_markdown(markdown: str, limit: int = MAX_MARKDOWN_CHARS) -> str:
    """``markdown`` cut to what GitHub accepts, saying so at the end when cut."""
    if len(markdown) <= limit:
        return markdown
    note = "\n\n_(cut here: the full report is in the run's artifacts)_\n"
    return markdown[: limit - len(note)] + note
