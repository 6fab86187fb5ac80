"""Names are data: a model name is checked where it enters rcb, and turned into a file
name by an encoding that no two names share.

A model name reaches Markdown (PR comments, job summaries, ``report.md``), HTML (the
site), the terminal and file paths (attempt logs, site pages). It is checked where it
enters (``--model``, a replay file's ``model`` field, a registry or submission file)
against :data:`MODEL_NAME`: the characters litellm names use (``provider/model``,
``bedrock/...:0``, ``vertex_ai/...@001``) and no others. Every output still escapes
it (``rcb_action.report.markdown_text`` and ``terminal_text``; the site's templates
autoescape), so a name from an older results file cannot inject either.

:func:`path_key` keys a file or folder by a name: a readable prefix and a hash of the
exact name, so ``acme/coder`` and ``acme_coder`` (or ``A`` and ``a`` on a
case-insensitive disk) never share a log folder or a page.
"""

from __future__ import annotations

import hashlib
import re

from rcb_action.errors import RcbError

MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}")
"""What a model name may be: 1 to 128 characters, an ASCII letter or digit first, then
letters, digits and ``. _ : / @ + -``."""

MODEL_NAME_RULE = "1 to 128 characters: a letter or digit, then letters, digits and . _ : / @ + -"


def shown(text: str, limit: int = 60) -> str:
    """``text`` quoted for a one-line error message: escapes for newlines, control and
    non-ASCII characters, cut to ``limit`` characters."""
    cut = text if len(text) <= limit else text[:limit] + "..."
    return ascii(cut)


def check_model_name(name: object, where: str) -> str:
    """``name`` when it is a valid model name (see :data:`MODEL_NAME`).

    Args:
        name: the name as read (any type: it comes from YAML, JSON or the command line).
        where: what to name in the error, e.g. ``--model`` or ``FILE:LINE: field 'model'``.

    Raises:
        RcbError: not a string, or not a valid model name (one line naming ``where``).
    """
    if not isinstance(name, str):
        raise RcbError(f"{where}: a model name must be a string, not {type(name).__name__}")
    if not MODEL_NAME.fullmatch(name):
        raise RcbError(f"{where}: model name {shown(name)} is not allowed ({MODEL_NAME_RULE})")
    return name


_UNSAFE_PATH = re.compile(r"[^A-Za-z0-9_.-]+")
PATH_PREFIX_CHARS = 40
PATH_HASH_CHARS = 10


def path_key(name: str) -> str:
    """A file or folder name for ``name`` that no other name gets: up to 40 readable
    characters (letters, digits, ``_ . -``), then ``-`` and 10 hex digits of the
    SHA-256 of the exact name. Stable across runs and machines."""
    readable = _UNSAFE_PATH.sub("_", name).strip("._-")[:PATH_PREFIX_CHARS].rstrip(".") or "x"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{readable}-{digest[:PATH_HASH_CHARS]}"
