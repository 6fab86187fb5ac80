"""Text from outside rcb (model names, task ids, messages) made inert for each output.

One helper per output kind, used by every writer of that kind:

- :func:`markdown_text` for GitHub-flavoured Markdown (``report.md``, job summaries,
  pull-request comments and verdicts);
- :func:`terminal_text` for the terminal (rich tables and lines);
- HTML is the site's: its jinja2 templates autoescape and ``site.js`` sets
  ``textContent``.

Both start from :func:`one_line`: no line breaks, no terminal escape sequences, no
control or invisible formatting characters.
"""

from __future__ import annotations

import re
import unicodedata

from rich.text import Text

# CSI (``ESC [ ... final``), OSC (``ESC ] ... BEL`` or ``ESC \``) and two-byte escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_BREAKS = {"Cc", "Zl", "Zp"}  # controls and line/paragraph separators: become a space
_DROPPED = {"Cf", "Cs", "Co", "Cn"}  # invisible formatting (bidi overrides), surrogates, ...


def one_line(text: str) -> str:
    """``text`` as one line of plain characters: terminal escape sequences removed,
    line breaks and other control characters turned into spaces, invisible formatting
    characters (zero-width, bidirectional overrides) and lone surrogates dropped."""
    if text.isascii() and text.isprintable():
        return text
    text = _ANSI.sub("", text)
    out = []
    for char in text:
        kind = unicodedata.category(char)
        if kind in _BREAKS:
            out.append(" ")
        elif kind not in _DROPPED:
            out.append(char)
    return "".join(out)


# Backslash-escaped: what Markdown would read as emphasis, code, links, HTML, tables,
# strikethrough, entities or math.
_MD_ESCAPED = re.compile(r"([\\`*_\[\]<>|~&$])")
# Broken with a zero-width space after them: GitHub turns them into mentions (@team),
# emoji (:white_check_mark:), issue links (#1) and autolinks (http://, a@b.c) after
# the Markdown is rendered, so a backslash does not stop them.
_MD_BROKEN = re.compile(r"([@:#])")
_ZERO_WIDTH_SPACE = "&#8203;"


def markdown_text(text: str) -> str:
    """``text`` as inline GitHub-flavoured Markdown that shows exactly that text (on
    one line), and can neither format, link, mention, embed HTML nor leave a table
    cell. For a place inside a line, e.g. a table cell or a sentence."""
    text = _MD_ESCAPED.sub(r"\\\1", one_line(text))
    text = re.sub(r"(?i)\bwww\.", lambda m: m.group(0)[:-1] + "\\.", text)
    return _MD_BROKEN.sub(r"\1" + _ZERO_WIDTH_SPACE, text)


def terminal_text(text: str) -> Text:
    """``text`` for a rich table cell or line: shown as is, never read as markup
    (``[red]``, ``[link=...]``) or emoji codes, and with no escape sequences."""
    return Text(one_line(text))
