"""Text from outside rcb made safe to write: no lone surrogates.

A Python ``str`` may hold lone surrogates (``"\\ud800"``): ``json.loads`` makes one
from the escape ``"\\ud800"`` in a replay file, a provider's SDK can hand one back,
and ``surrogateescape`` decoding makes them from stray bytes. Such text cannot be
encoded as UTF-8, so writing it (results, logs, a file in a sandbox, the terminal)
raises ``UnicodeEncodeError``.

The rule: text is made valid where it enters rcb (a model's answer in
:class:`rcb_action.models.Completion`, every field of a replay file), and the
writers of results and logs pass what they write through :func:`utf8_safe` again,
so text from any other source cannot crash them either. A lone surrogate becomes
U+FFFD (the replacement character); a well-formed surrogate pair becomes the
character it encodes; everything else is kept as is.
"""

from __future__ import annotations

from typing import Any


def utf8_safe(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it encodes as UTF-8.

    Never raises for a ``str``; returns ``text`` itself when it is already valid.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 with surrogatepass joins well-formed pairs; decoding replaces the rest.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def utf8_safe_data(data: Any) -> Any:
    """JSON-like ``data`` (dicts, lists, strings, scalars) with :func:`utf8_safe`
    applied to every string in it, keys included; other values are returned as is."""
    if isinstance(data, str):
        return utf8_safe(data)
    if isinstance(data, dict):
        return {utf8_safe_data(key): utf8_safe_data(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return type(data)(utf8_safe_data(item) for item in data)
    return data
