"""Extract the answer's code and splice it into the masked file.

An answer is the model's text, hostile or broken in any way: everything here runs in
time linear in its size and raises nothing for any ``str``. Code that will not
compile is spliced as it is; the sandbox finds that out and classes it.
"""

from __future__ import annotations

import re

from rcb_action.prompts import masked_file
from rcb_action.tasks import Task
from rcb_action.text import utf8_safe

# An answer longer than this (UTF-8 bytes) is not read: it counts as ``no_code``.
MAX_ANSWER_BYTES = 256 * 1024

# Lines are split on "\n" only. A fence opens on a line that starts (after spaces or
# tabs) with ``` and an optional language tag, and is followed by a newline; it
# closes at the next line that is ``` alone (spaces and tabs around it allowed).
_OPEN = re.compile(r"[ \t]*```[ \t]*(?P<lang>[\w+-]*)")
_CLOSE = re.compile(r"[ \t]*```[ \t]*")
_PYTHON = {"python", "py", "python3"}


def _answer_bytes(completion: str) -> int:
    return len(completion.encode("utf-8", "surrogatepass"))


def _fenced_blocks(completion: str) -> list[tuple[str, int, int]]:
    """Each fenced block as (lowercased language tag, first body line, end line), the
    body being ``lines[first:end]``; one pass over the lines.

    A fence left open never closes: no later line can close it, so the scan stops
    there (the old regex retried from every later line: quadratic time).
    """
    lines = completion.split("\n")
    blocks = []
    lang: str | None = None
    first = 0
    for number, line in enumerate(lines):
        if lang is None:
            opened = _OPEN.match(line)
            if opened and number < len(lines) - 1:
                lang, first = opened["lang"].lower(), number + 1
        elif _CLOSE.fullmatch(line):
            blocks.append((lang, first, number))
            lang = None
    return blocks


def _extract(completion: str) -> tuple[str | None, str]:
    """The code of ``completion`` and, when there is none, why."""
    size = _answer_bytes(completion)
    if size > MAX_ANSWER_BYTES:
        kib = -(-size // 1024)  # rounded up: 256 KB and one byte reads "257 KB"
        return None, f"answer is {kib} KB, over the {MAX_ANSWER_BYTES // 1024} KB limit"
    blocks = _fenced_blocks(completion)
    if not blocks:
        return None, "no fenced code block"
    chosen = [b for b in blocks if b[0] in _PYTHON] or [b for b in blocks if not b[0]]
    if not chosen:
        return None, "no fenced python code block (only other languages)"
    _, first, end = chosen[-1]
    body = "".join(line + "\n" for line in completion.split("\n")[first:end])
    if not body.strip():
        return None, "the last fenced python code block is empty"
    return body, ""


def extract_code(completion: str) -> str | None:
    """The last fenced python block of a model's answer, or ``None`` when there is none.

    A block labelled ``python``/``py``/``python3`` wins; an unlabelled block is used
    only when no labelled one exists. A block with nothing but whitespace counts as
    no code, and so does an answer over :data:`MAX_ANSWER_BYTES` of UTF-8 (see
    :func:`no_code_reason`). Fences may be indented. Linear time; never raises.
    """
    return _extract(completion)[0]


def no_code_reason(completion: str) -> str:
    """Why :func:`extract_code` finds no code in ``completion`` (a record's message,
    e.g. ``"answer is 300 KB, over the 256 KB limit"``); empty when it finds some."""
    return _extract(completion)[1]


def reindent(code: str, indent: str) -> list[str]:
    """``code``'s lines moved from their common margin (the fewest leading spaces of a
    non-blank line) to ``indent``.

    Blank lines stay, at either end too, and a whitespace-only line keeps what it has
    beyond the margin (one with less becomes empty): the reference's answer then
    splices back into the task's own file byte for byte, and takes the reference
    run's verdict without running again (see ``score_snippet``). Any text is accepted
    (tabs are expanded to 4 columns; carriage returns, form feeds and NUL bytes are
    kept as they are, for the sandbox's compiler to judge).
    """
    lines = code.expandtabs(4).split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()  # the newline that ends the last line
    margin = min((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()), default=0)
    out = []
    for line in lines:
        kept = line.strip() or line.startswith(" " * margin)
        out.append((indent + line[margin:] if kept else "") + "\n")
    return out


def splice(task: Task, snippet_name: str, code: str) -> str:
    """The target file with ``code`` in place of the masked snippet (all tags stripped).

    The result always encodes as UTF-8 (lone surrogates become U+FFFD), so it can be
    written into a sandbox whatever the code holds.
    """
    lines, at = masked_file(task, snippet_name)
    indent = task.snippets[snippet_name].indent
    return utf8_safe("".join(lines[:at] + reindent(code, indent) + lines[at + 2 :]))
