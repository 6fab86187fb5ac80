"""Extract the answer's code and splice it into the masked file."""

from __future__ import annotations

import re
import textwrap

from rcb_action.prompts import masked_file
from rcb_action.tasks import Task

# A fence opens with ``` (optionally a language tag) and closes with ``` on its own line.
_FENCE = re.compile(
    r"^[ \t]*```[ \t]*(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^[ \t]*```[ \t]*$", re.M | re.S
)
_PYTHON = {"python", "py", "python3"}


def extract_code(completion: str) -> str | None:
    """The last fenced python block of a model's answer, or ``None`` when there is none.

    A block labelled ``python``/``py``/``python3`` wins; an unlabelled block is used
    only when no labelled one exists. A block with nothing but whitespace counts as
    no code.
    """
    blocks = [(m["lang"].lower(), m["body"]) for m in _FENCE.finditer(completion)]
    labelled = [body for lang, body in blocks if lang in _PYTHON]
    bare = [body for lang, body in blocks if not lang]
    chosen = labelled or bare
    if not chosen or not chosen[-1].strip():
        return None
    return chosen[-1]


def reindent(code: str, indent: str) -> list[str]:
    """Dedent ``code`` and indent every non-blank line by ``indent``."""
    body = textwrap.dedent(code.expandtabs(4)).strip("\n")
    return [(indent + line if line.strip() else "") + "\n" for line in body.split("\n")]


def splice(task: Task, snippet_name: str, code: str) -> str:
    """The target file with ``code`` in place of the masked snippet (all tags stripped)."""
    lines, at = masked_file(task, snippet_name)
    indent = task.snippets[snippet_name].indent
    return "".join(lines[:at] + reindent(code, indent) + lines[at + 2 :])
