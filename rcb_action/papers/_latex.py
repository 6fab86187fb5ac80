"""From an arXiv e-print to the one LaTeX text a model is given.

An e-print is what ``https://arxiv.org/e-print/<id>v<n>`` answers: a gzipped
single ``.tex`` file, a gzipped tarball of the submission, or (for a paper
submitted as PDF) the PDF itself, which means there is no source to give. The
text is the submission's main file (the one with ``\\documentclass``) with
``\\input``, ``\\include``, ``\\subfile``, ``\\import`` and ``\\subimport``
flattened; comments (``%``, ``comment`` environments, ``\\iffalse`` blocks),
figures, ``\\includegraphics`` and the bibliography removed; everything after
``\\end{document}`` dropped; line endings, trailing spaces and runs of blank
lines normalised. The result depends on the e-print's bytes only (tar members
are read by name, never in archive or file-system order), so every machine
makes the same bytes.

Why not a library. ``arxiv-latex-cleaner`` (Google Research) removes comments
well, but only as a folder-to-folder tool (``run_arxiv_cleaner`` writes an
``_arXiv`` copy, resizes images through Pillow and needs absl and regex); its
text functions are private, it reads UTF-8 only, and it does not flatten
``\\input``. ``pylatexenc`` 2.11 parses LaTeX into nodes with positions, but
takes a ``%`` inside ``\\url{...}`` for a comment, and in tolerant mode the
broken group then swallows the rest of the document, so stripping by its nodes
can cut text silently. What is needed here is narrow (find files, drop
comments, inline inputs, cut a few environments), so it is done by the small
line scanner below, tested on its own in ``tests/test_papers.py``.
"""

from __future__ import annotations

import io
import posixpath
import re
import tarfile
import zlib

# Bumped whenever the cleaning below changes what it makes: cached texts made by
# another version are made again from the cached e-print.
CLEANER_VERSION = 1

MAX_EPRINT_BYTES = 100 * 1024 * 1024  # arXiv's own limit is 50 MB
MAX_FILE_BYTES = 20 * 1024 * 1024
_MAX_DEPTH = 20

# Environments whose body is verbatim: a % there is text, not a comment.
_VERBATIM = ("verbatim", "verbatim*", "lstlisting", "minted", "Verbatim", "alltt")
# Removed with their body.
_DROPPED_ENVS = (
    "comment",
    "figure",
    "figure*",
    "wrapfigure",
    "SCfigure",
    "thebibliography",
)
# Removed with their arguments.
_DROPPED_COMMANDS = (
    "includegraphics",
    "bibliography",
    "bibliographystyle",
    "addbibresource",
    "nobibliography",
)
_INPUT = re.compile(
    r"\\(?P<cmd>input|include|subfile|import|subimport|includefrom|subincludefrom)"
    r"(?![A-Za-z@])\s*"
)
_DOCUMENTCLASS = re.compile(r"^[ \t]*\\documentclass(?![A-Za-z@])", re.M)
_BEGIN_DOCUMENT = re.compile(r"\\begin\s*\{document\}")
_END_DOCUMENT = re.compile(r"\\end\s*\{document\}")
_PREFERRED_MAIN = ("main.tex", "ms.tex", "paper.tex", "arxiv.tex")


class EprintError(ValueError):
    """The e-print cannot be made into a text (unreadable, no main file)."""


class NoSource(EprintError):
    """arXiv has no LaTeX source for this version: the e-print is a PDF or PostScript."""


def _decode(data: bytes) -> str:
    """UTF-8 (a BOM dropped), else Latin-1: every byte string decodes, the same way everywhere."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _gunzip(data: bytes) -> bytes:
    """Decompress, refusing output past ``MAX_EPRINT_BYTES`` (a gzip bomb).

    Raises:
        EprintError: corrupt or too large.
    """
    decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = decompressor.decompress(data, MAX_EPRINT_BYTES + 1)
    except zlib.error as exc:
        raise EprintError(f"corrupt gzip data ({exc})") from None
    if len(out) > MAX_EPRINT_BYTES or decompressor.unconsumed_tail:
        raise EprintError(f"the e-print unpacks to more than {MAX_EPRINT_BYTES // 2**20} MB")
    return out


def _is_tar(data: bytes) -> bool:
    return len(data) >= 262 and data[257:262] == b"ustar"


def _safe_member(name: str) -> str | None:
    """The member's path, normalised and relative; None for one that leaves the archive."""
    path = posixpath.normpath(name.replace("\\", "/")).lstrip("/")
    if path in ("", ".") or path == ".." or path.startswith("../"):
        return None
    return path


def unpack_eprint(data: bytes) -> dict[str, bytes]:
    """The files of an e-print, by relative path.

    Raises:
        NoSource: the e-print is a PDF or PostScript (no LaTeX source on arXiv).
        EprintError: it cannot be read.
    """
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data)
    head = data[:1024].lstrip()
    if head.startswith(b"%PDF"):
        raise NoSource("arXiv has only a PDF of this version, no LaTeX source")
    if head.startswith(b"%!PS"):
        raise NoSource("arXiv has only PostScript of this version, no LaTeX source")
    if not _is_tar(data):
        if b"\0" in data[:4096]:
            raise EprintError("the e-print is neither a tarball nor a text file")
        return {"main.tex": data}
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            for member in archive.getmembers():
                path = _safe_member(member.name)
                if path is None or not member.isfile() or member.size > MAX_FILE_BYTES:
                    continue  # links, folders, devices and oversized blobs are never read
                handle = archive.extractfile(member)
                if handle is not None:
                    files[path] = handle.read()
    except (tarfile.TarError, EOFError) as exc:
        raise EprintError(f"corrupt tarball ({exc})") from None
    return files


# --- comments -------------------------------------------------------------------


def _skip_braced(line: str, start: int) -> int:
    """The index just past the balanced ``{...}`` group starting at ``start`` (or the line's end)."""
    depth = 0
    i = start
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return len(line)


_VERB = re.compile(r"\\verb\*?(?![A-Za-z@])")
_URLISH = re.compile(r"\\(?:url|href|path)\s*(?=\{)")


def _comment_start(line: str) -> int:
    """Where the line's comment starts (-1 when it has none).

    A ``%`` counts unless escaped (an odd run of backslashes before it), inside
    ``\\verb|...|``, or inside the braced argument of ``\\url``, ``\\href`` or ``\\path``.
    """
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            verb = _VERB.match(line, i)
            if verb and verb.end() < len(line):
                delim = line[verb.end()]
                close = line.find(delim, verb.end() + 1)
                i = len(line) if close < 0 else close + 1
                continue
            url = _URLISH.match(line, i)
            if url:
                i = _skip_braced(line, url.end())
                continue
            i += 2  # the escaped character (\%, \\, \{ ...) is never a comment
            continue
        if ch == "%":
            return i
        i += 1
    return -1


def _env_pattern(names: tuple[str, ...], kind: str) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(n) for n in names)
    return re.compile(rf"\\{kind}\s*\{{({alternatives})\}}")


_VERB_BEGIN = _env_pattern(_VERBATIM, "begin")


def strip_comments(text: str) -> str:
    """``text`` without LaTeX comments; verbatim environments kept as they are.

    A line that held only a comment disappears with its line break (as TeX reads
    it, it was never there); a comment after text is cut, keeping a bare ``%``
    where the text does not end in a space, since there the ``%`` also joins the
    line with the next one.
    """
    out: list[str] = []
    verbatim_end: str | None = None
    for line in text.split("\n"):
        if verbatim_end is not None:
            out.append(line)
            if verbatim_end in line:
                verbatim_end = None
            continue
        at = _comment_start(line)
        if at < 0:
            out.append(line)
        else:
            kept = line[:at]
            if not kept.strip():
                continue
            out.append(kept.rstrip() if kept[-1] in " \t" else kept + "%")
            line = kept
        begin = _VERB_BEGIN.search(line)
        if begin and f"\\end{{{begin[1]}}}" not in line[begin.end() :]:
            verbatim_end = f"\\end{{{begin[1]}}}"
    return "\n".join(out)


# --- blocks removed whole ----------------------------------------------------------------

_IF = re.compile(r"\\(if[A-Za-z@]*|fi)(?![A-Za-z@])")
_NOT_CONDITIONALS = {"iff", "ifthenelse"}


def _drop_iffalse(text: str) -> str:
    r"""``\iffalse ... \fi`` removed (nested conditionals counted); an unclosed one is kept."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find("\\iffalse", pos)
        while start >= 0 and re.match(r"[A-Za-z@]", text[start + 8 : start + 9]):
            start = text.find("\\iffalse", start + 8)
        if start < 0:
            out.append(text[pos:])
            return "".join(out)
        depth = 0
        end = -1
        for match in _IF.finditer(text, start):
            name = match[1]
            if name in _NOT_CONDITIONALS:
                continue
            depth += -1 if name == "fi" else 1
            if depth == 0:
                end = match.end()
                break
        if end < 0:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos:start])
        pos = end


def _drop_environments(text: str, names: tuple[str, ...]) -> str:
    """Each ``\\begin{name} ... \\end{name}`` (same-name nesting counted) removed."""
    begin = _env_pattern(names, "begin")
    out: list[str] = []
    pos = 0
    while True:
        found = begin.search(text, pos)
        if not found:
            out.append(text[pos:])
            return "".join(out)
        name = found[1]
        pair = re.compile(rf"\\(begin|end)\s*\{{{re.escape(name)}\}}")
        depth = 0
        end = -1
        for match in pair.finditer(text, found.start()):
            depth += 1 if match[1] == "begin" else -1
            if depth == 0:
                end = match.end()
                break
        if end < 0:  # unclosed: drop to the end of the text, as LaTeX would fail there
            end = len(text)
        out.append(text[pos : found.start()])
        pos = end


def _skip_arguments(text: str, pos: int) -> int:
    """Past any ``*``, ``[...]`` and ``{...}`` arguments starting at ``pos`` (spaces between)."""
    while True:
        probe = pos
        while probe < len(text) and text[probe] in " \t":
            probe += 1
        if probe < len(text) and text[probe] == "*":
            pos = probe + 1
            continue
        if probe < len(text) and text[probe] in "[{":
            close = "]" if text[probe] == "[" else "}"
            depth = 0
            i = probe
            while i < len(text):
                ch = text[i]
                if ch == "\\":
                    i += 2
                    continue
                if ch == text[probe]:
                    depth += 1
                elif ch == close:
                    depth -= 1
                    if depth == 0:
                        break
                i += 1
            pos = min(i + 1, len(text))
            continue
        return pos


def _drop_commands(text: str, names: tuple[str, ...]) -> str:
    pattern = re.compile(rf"\\({'|'.join(names)}|printbibliography)(?![A-Za-z@])")
    out: list[str] = []
    pos = 0
    for match in pattern.finditer(text):
        if match.start() < pos:
            continue
        out.append(text[pos : match.start()])
        pos = _skip_arguments(text, match.end())
    out.append(text[pos:])
    return "".join(out)


# --- flattening -------------------------------------------------------------------------


def _braced_args(text: str, pos: int, count: int) -> tuple[list[str], int] | None:
    """``count`` brace-delimited arguments from ``pos`` (spaces between), or None."""
    args = []
    for _ in range(count):
        while pos < len(text) and text[pos] in " \t\n":
            pos += 1
        if pos >= len(text) or text[pos] != "{":
            return None
        end = _skip_braced(text, pos)
        args.append(text[pos + 1 : end - 1].strip())
        pos = end
    return args, pos


def _resolve(files: dict[str, bytes], folder: str, name: str) -> str | None:
    name = name.strip().strip('"')
    for candidate in (name, f"{name}.tex"):
        path = _safe_member(posixpath.join(folder, candidate))
        if path is not None and path in files:
            return path
    return None


def _flatten(files: dict[str, bytes], path: str, seen: tuple[str, ...]) -> str:
    text = strip_comments(_decode(files[path]).replace("\r\n", "\n").replace("\r", "\n"))
    if len(seen) > _MAX_DEPTH:
        return text
    folder = posixpath.dirname(path)
    out: list[str] = []
    pos = 0
    for match in _INPUT.finditer(text):
        if match.start() < pos:
            continue
        cmd = match["cmd"]
        two = cmd in ("import", "subimport", "includefrom", "subincludefrom")
        parsed = _braced_args(text, match.end(), 2 if two else 1)
        if parsed is None and cmd == "input":
            # TeX's own form: \input file-name, ended by a space or the line's end.
            bare = re.match(r"[^\s{}\\%]+", text[match.end() :])
            parsed = ([bare[0]], match.end() + bare.end()) if bare else None
        if parsed is None:
            continue
        args, end = parsed
        target_folder = posixpath.join(folder, args[0]) if two else folder
        target = _resolve(files, target_folder, args[-1])
        out.append(text[pos : match.start()])
        if target is not None and target not in seen:
            body = _flatten(files, target, (*seen, target))
            out.append(body if body.endswith("\n") else body + "\n")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _score_main(path: str, text: str, referenced: set[str]) -> tuple[int, int, int, int, str]:
    # Lower sorts first: not included by another file, has \begin{document},
    # a usual main-file name, then the longest, then by name.
    name = posixpath.basename(path).lower()
    return (
        path in referenced,
        not _BEGIN_DOCUMENT.search(text),
        _PREFERRED_MAIN.index(name) if name in _PREFERRED_MAIN else len(_PREFERRED_MAIN),
        -len(text),
        path,
    )


def find_main(files: dict[str, bytes]) -> str:
    """The submission's main file: a ``.tex`` file with ``\\documentclass`` outside a comment.

    Among several: one no other file inputs, with ``\\begin{document}``, named
    like a main file (main.tex, ms.tex, paper.tex, arxiv.tex), the longest, then
    the first by name.

    Raises:
        EprintError: no file has ``\\documentclass``.
    """
    texts = {
        path: strip_comments(_decode(data))
        for path, data in files.items()
        if path.lower().endswith((".tex", ".ltx", ".latex")) or path == "main.tex"
    }
    candidates = [path for path, text in texts.items() if _DOCUMENTCLASS.search(text)]
    if not candidates:
        raise EprintError("no .tex file has \\documentclass")
    referenced = set()
    for path, text in texts.items():
        for match in _INPUT.finditer(text):
            parsed = _braced_args(text, match.end(), 1)
            if parsed:
                target = _resolve(files, posixpath.dirname(path), parsed[0][0])
                if target:
                    referenced.add(target)
    return min(candidates, key=lambda p: _score_main(p, texts[p], referenced))


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.split("\n")]
    tidy = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    return tidy + "\n"


def clean_latex(text: str) -> str:
    """One LaTeX text cleaned: comments, figures, graphics and the bibliography removed,
    nothing after ``\\end{document}``, whitespace normalised."""
    text = strip_comments(text.replace("\r\n", "\n").replace("\r", "\n"))
    end = _END_DOCUMENT.search(text)
    if end:
        text = text[: end.end()]
    text = _drop_iffalse(text)
    text = _drop_environments(text, _DROPPED_ENVS)
    text = _drop_commands(text, _DROPPED_COMMANDS)
    return _tidy(text)


def flatten_files(files: dict[str, bytes], main: str | None = None) -> str:
    """The submission as one cleaned LaTeX text, from its files by relative path.

    Raises:
        EprintError: no main file.
    """
    main = main or find_main(files)
    return clean_latex(_flatten(files, main, (main,)))


def eprint_text(data: bytes) -> str:
    """The cleaned, flattened LaTeX of an e-print's bytes.

    Raises:
        NoSource: a PDF or PostScript e-print.
        EprintError: unreadable, or no main file.
    """
    return flatten_files(unpack_eprint(data))
