"""The paper2code tag parser.

Tags are full-line comments, compatible with ResearchCodeBench::

    # <paper2code name="scale and shift">
    x = x * self.weight + self.bias
    # </paper2code name="scale and shift">

They nest like brackets. An end tag must close the innermost open snippet, with
the same name and at the same indentation. A snippet is the lines strictly
between its two tags, nested snippets included.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_TAG = re.compile(r'^(?P<indent>[ \t]*)#\s*<(?P<end>/?)paper2code\s+name="(?P<name>[^"]+)"\s*>\s*$')
_LOOKS_LIKE_TAG = re.compile(r"^\s*#.*paper2code")


class TagError(ValueError):
    """A tag problem, formatted ``file:line: what is wrong`` (line numbers from 1)."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


def is_tag_line(line: str) -> bool:
    """True for a start or end tag line."""
    return _TAG.match(line) is not None


def is_code_line(line: str) -> bool:
    """A line that counts toward a snippet's weight: not blank, not a comment."""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def code_lines(lines: list[str]) -> int:
    """Number of weighted lines (non-blank, non-comment, not a tag)."""
    return sum(1 for line in lines if is_code_line(line) and not is_tag_line(line))


def docstring_lines(text: str) -> frozenset[int]:
    """0-based indices of the lines of every module, class and function docstring.

    A docstring is documentation: no check reads it, so it weighs nothing, like a
    comment. Text that does not parse as Python has none.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return frozenset()
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
                and first.end_lineno is not None
            ):
                found.update(range(first.lineno - 1, first.end_lineno))
    return frozenset(found)


@dataclass
class Snippet:
    """One marked snippet of an annotated file.

    ``start`` and ``end`` are 0-based indices of the start and end tag lines.
    """

    name: str
    path: str
    start: int
    end: int
    indent: str
    parent: str | None = None
    children: list[str] = field(default_factory=list)

    def body(self, lines: list[str]) -> list[str]:
        """The lines strictly between the tags, nested tag lines removed."""
        return [line for line in lines[self.start + 1 : self.end] if not is_tag_line(line)]

    def weight(self, lines: list[str], docstrings: frozenset[int] = frozenset()) -> int:
        """Code lines of the reference body, docstring lines (0-based indices in
        ``docstrings``) left out; nested snippets count here too."""
        return code_lines(
            [
                line
                for i, line in enumerate(lines[: self.end])
                if i > self.start and i not in docstrings
            ]
        )


@dataclass
class AnnotatedFile:
    """An annotated source file and the snippets found in it, in file order."""

    path: str
    lines: list[str]
    snippets: list[Snippet]
    docstrings: frozenset[int] = frozenset()  # 0-based indices of docstring lines

    def stripped(self) -> list[str]:
        """The file with every tag line removed."""
        return [line for line in self.lines if not is_tag_line(line)]

    def weight(self, snippet: Snippet) -> int:
        """The snippet's weighted lines: code lines, docstrings left out."""
        return snippet.weight(self.lines, self.docstrings)


def parse_tags(path: str, text: str) -> AnnotatedFile:
    """Parse the paper2code tags of one file.

    Args:
        path: the file's path as it should appear in error messages.
        text: the file's contents.

    Raises:
        TagError: on an unclosed, mismatched, mis-indented, stray or malformed tag,
            or a name used twice in the file.
    """
    lines = text.splitlines(keepends=True)
    open_stack: list[Snippet] = []
    done: list[Snippet] = []
    seen: dict[str, int] = {}
    for index, line in enumerate(lines):
        match = _TAG.match(line)
        if match is None:
            if _LOOKS_LIKE_TAG.match(line):
                raise TagError(
                    path,
                    index + 1,
                    'malformed paper2code tag; write it as # <paper2code name="..."> '
                    'or # </paper2code name="...">',
                )
            continue
        name, indent = match["name"], match["indent"]
        if not match["end"]:
            if name in seen:
                raise TagError(
                    path,
                    index + 1,
                    f'duplicate snippet name "{name}" (first used at line {seen[name]})',
                )
            seen[name] = index + 1
            parent = open_stack[-1].name if open_stack else None
            snippet = Snippet(
                name=name, path=path, start=index, end=-1, indent=indent, parent=parent
            )
            if open_stack:
                open_stack[-1].children.append(name)
            open_stack.append(snippet)
            continue
        if not open_stack:
            raise TagError(path, index + 1, f'end tag "{name}" closes nothing: no snippet is open')
        innermost = open_stack[-1]
        if innermost.name != name:
            raise TagError(
                path,
                index + 1,
                f'end tag "{name}" does not match the innermost open snippet '
                f'"{innermost.name}" (opened at line {innermost.start + 1})',
            )
        if indent != innermost.indent:
            raise TagError(
                path,
                index + 1,
                f'end tag "{name}" is indented {len(indent)} columns but its start tag '
                f"(line {innermost.start + 1}) is indented {len(innermost.indent)}",
            )
        innermost.end = index
        done.append(open_stack.pop())
    if open_stack:
        unclosed = open_stack[-1]
        raise TagError(path, unclosed.start + 1, f'snippet "{unclosed.name}" is never closed')
    done.sort(key=lambda s: s.start)
    docstrings = docstring_lines(text) if path.endswith(".py") else frozenset()
    return AnnotatedFile(path=path, lines=lines, snippets=done, docstrings=docstrings)
