"""The paper a task's prompt carries, pinned and cached; and its notes.

``paper: {source: arxiv}``: the LaTeX source of ``arxiv_version`` from arXiv's
e-print endpoint, flattened and cleaned (:mod:`._latex`), cached as
``$RCB_CACHE_DIR/papers/<id>v<n>.tex`` beside the e-print it was made from
(``.eprint``) and a note of where it came from (``.json``). Versions never
change on arXiv, so a cached text is never fetched again; a text made by an
older cleaner is made again from the cached e-print, offline.

``paper: {source: vendored, license: ...}``: a full text the task folder holds
(``paper.tex`` by default), under a licence that allows it (``VENDORED_LICENSES``).

There is no fallback: when the text cannot be had, :class:`PaperUnavailable`
says so in one line naming the task and the fix, and nothing runs with another text.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rcb_action.errors import RcbError
from rcb_action.papers._arxiv import EprintClient, FetchError
from rcb_action.papers._latex import (
    CLEANER_VERSION,
    EprintError,
    NoSource,
    clean_latex,
    eprint_text,
)
from rcb_action.paths import cache_dir, write_atomic
from rcb_action.tasks import Task

NOTES_FILE = "notes.md"


@dataclass(frozen=True)
class Paper:
    """A text a prompt carries: the paper (or, for ``--paper notes``, the notes).

    Attributes:
        text: the exact text.
        sha: sha256 of its UTF-8 bytes, hex (``paper_sha`` in records).
        origin: where it comes from, e.g. ``arXiv 2503.10622v1``.
    """

    text: str
    sha: str
    origin: str


class PaperUnavailable(RcbError):
    """The paper's text cannot be had; the message names the task and the fix."""


class NoLatexSource(PaperUnavailable):
    """arXiv has only a PDF of the pinned version: the task must vendor a full text."""


def _paper(text: str, origin: str) -> Paper:
    return Paper(text=text, sha=hashlib.sha256(text.encode("utf-8")).hexdigest(), origin=origin)


def papers_dir() -> Path:
    """``$RCB_CACHE_DIR/papers``, created."""
    return cache_dir("papers")


def pinned_name(task: Task) -> str | None:
    """``<id>v<n>`` of a ``source: arxiv`` task, else None."""
    config = task.config
    if config.paper.source != "arxiv" or not config.arxiv or not config.arxiv_version:
        return None
    return f"{config.arxiv}v{config.arxiv_version}"


def _fix(task: Task) -> str:
    return f"run `rcb paper fetch {task.id}` where arXiv can be reached, or pass --paper without"


def _read_meta(path: Path) -> dict[str, object]:
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


# Texts already read in this process: prompts for every snippet read the same file.
_MEMO: dict[tuple[str, int, int], Paper] = {}
_MEMO_LOCK = threading.Lock()


def _read_text(path: Path, origin: str) -> Paper:
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    with _MEMO_LOCK:
        if key not in _MEMO:
            _MEMO[key] = _paper(path.read_bytes().decode("utf-8"), origin)
        return _MEMO[key]


def _no_source(task: Task, name: str) -> NoLatexSource:
    return NoLatexSource(
        f"task {task.id}: arXiv has no LaTeX source for {name} (a PDF-only submission); "
        f"vendor a full text under an allowed licence in {task.root / 'task.yaml'}: "
        "paper: {source: vendored, license: CC-BY-4.0}"
    )


def cached_paper(task: Task) -> Paper | None:
    """The task's paper when it can be had without the network, else None.

    Raises:
        NoLatexSource: the cache knows arXiv has only a PDF of this version.
        PaperUnavailable: a vendored file that cannot be read.
    """
    config = task.config
    if config.paper.in_task:
        return vendored_paper(task)
    name = pinned_name(task)
    if name is None:
        return None
    folder = papers_dir()
    text_path, eprint_path, meta_path = (
        folder / f"{name}{ext}" for ext in (".tex", ".eprint", ".json")
    )
    meta = _read_meta(meta_path)
    if meta.get("source") == "pdf":
        raise _no_source(task, name)
    if text_path.is_file():
        stale = meta and meta.get("cleaner") != CLEANER_VERSION and eprint_path.is_file()
        if not stale:
            return _read_text(text_path, f"arXiv {name}")
    if eprint_path.is_file():
        try:
            return _store(task, name, eprint_path.read_bytes(), meta.get("url"))
        except EprintError:
            return None
    return None


def _store(task: Task, name: str, data: bytes, url: object) -> Paper:
    """Make the text from e-print bytes and cache all three files.

    Raises:
        NoLatexSource: a PDF-only version (remembered in the cache).
        EprintError: an e-print that cannot be read.
    """
    folder = papers_dir()
    meta: dict[str, object] = {
        "arxiv": task.config.arxiv,
        "version": task.config.arxiv_version,
        "url": url,
        "eprint_sha256": hashlib.sha256(data).hexdigest(),
        "cleaner": CLEANER_VERSION,
        "fetched_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    try:
        text = eprint_text(data)
    except NoSource:
        meta["source"] = "pdf"
        write_atomic(folder / f"{name}.json", json.dumps(meta, indent=1).encode())
        raise _no_source(task, name) from None
    paper = _paper(text, f"arXiv {name}")
    meta.update(source="latex", paper_sha=paper.sha)
    write_atomic(folder / f"{name}.eprint", data)
    write_atomic(folder / f"{name}.tex", text.encode("utf-8"))
    write_atomic(folder / f"{name}.json", json.dumps(meta, indent=1).encode())
    return paper


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Other processes on this machine (shards) wait instead of fetching the same e-print."""
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def fetch_paper(task: Task, client: EprintClient | None = None) -> Paper:
    """The task's paper: from the cache, else downloaded once and cached.

    Raises:
        NoLatexSource: arXiv has only a PDF of the pinned version.
        PaperUnavailable: it could not be downloaded or read (one line: task, cause, fix).
    """
    paper = cached_paper(task)
    if paper is not None:
        return paper
    name = pinned_name(task)
    if name is None:
        raise PaperUnavailable(
            f"task {task.id}: its paper is not on arXiv and no full text is vendored "
            f"({task.root / 'task.yaml'}: key 'paper')"
        )
    with _file_lock(papers_dir() / f".{name}.lock"):
        paper = cached_paper(task)  # another process may have fetched it meanwhile
        if paper is not None:
            return paper
        client = client or EprintClient()
        try:
            data = client.fetch(str(task.config.arxiv), int(task.config.arxiv_version or 0))
            return _store(
                task,
                name,
                data,
                client.eprint_url(str(task.config.arxiv), int(task.config.arxiv_version or 0)),
            )
        except FetchError as exc:
            if exc.status == 404:
                raise PaperUnavailable(
                    f"task {task.id}: arXiv has no {name} ({exc}); fix 'arxiv'/'arxiv_version' "
                    f"in {task.root / 'task.yaml'}"
                ) from None
            raise PaperUnavailable(
                f"task {task.id}: the paper ({name}) is not cached and could not be fetched "
                f"({exc}); {_fix(task)}"
            ) from None
        except EprintError as exc:
            raise PaperUnavailable(
                f"task {task.id}: the e-print of {name} cannot be read ({exc}); vendor a full "
                "text instead: paper: {source: vendored, license: CC-BY-4.0}"
            ) from None


def paper_for(task: Task, *, fetch: bool = True, client: EprintClient | None = None) -> Paper:
    """The paper a prompt for ``task`` carries.

    Args:
        task: a snippet task.
        fetch: download it when it is not cached (else only the cache is read).
        client: the e-print client (default: arXiv, or ``$RCB_ARXIV_URL``).

    Raises:
        NoLatexSource: arXiv has only a PDF of the pinned version.
        PaperUnavailable: no text can be had (one line naming the task and the fix).
    """
    if fetch:
        return fetch_paper(task, client)
    paper = cached_paper(task)
    if paper is None:
        name = pinned_name(task) or "its paper"
        raise PaperUnavailable(f"task {task.id}: the paper ({name}) is not cached; {_fix(task)}")
    return paper


def vendored_paper(task: Task) -> Paper:
    """The full text a ``source: vendored`` (or ``imported``) task holds, cleaned like an
    e-print's main file when it is LaTeX.

    Raises:
        PaperUnavailable: the file is missing or not UTF-8.
    """
    rel = task.config.paper.file
    path = task.root / rel
    try:
        raw = task.read_bytes(rel).decode("utf-8")
    except (OSError, UnicodeDecodeError, RcbError) as exc:
        raise PaperUnavailable(
            f"{path}: the vendored paper cannot be read ({exc}); "
            f"{task.root / 'task.yaml'} key 'paper' names it"
        ) from None
    text = clean_latex(raw) if rel.endswith(".tex") else raw
    if task.config.paper.source == "imported":
        return _paper(text, f"{rel} (as the imported benchmark ships it)")
    return _paper(text, f"{rel} ({task.config.paper.license})")


def notes_for(task: Task) -> Paper:
    """The task's ``notes.md`` (maintainers' notes on the method), for ``--paper notes``.

    Raises:
        PaperUnavailable: the task has no notes.md.
    """
    path = task.root / NOTES_FILE
    if not path.is_file():
        raise PaperUnavailable(
            f"task {task.id}: --paper notes needs {path} (maintainers' notes on the method); "
            "write it, or leave the task out with --tasks"
        )
    try:
        text = task.read_bytes(NOTES_FILE).decode("utf-8")
    except (OSError, UnicodeDecodeError, RcbError) as exc:
        raise PaperUnavailable(f"{path}: cannot be read ({exc})") from None
    return _paper(text, NOTES_FILE)
