"""The candidate queue: a YAML file in the repository that maintainers review in pull requests.

Entries are sorted by score (highest first), then arXiv id; every entry's keys
come in one fixed order; the file is rewritten only when its text changes. So a
crawl that finds nothing new leaves the file byte for byte as it was, and a
crawl that finds something shows as a small diff.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rcb_action.errors import RcbError, format_validation_error

ARXIV_ID = re.compile(r"^\d{4}\.\d{4,5}$")
_VERSIONED_ID = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5})(?:v(\d+))?$", re.IGNORECASE)
Status = Literal["new", "rejected", "task"]

QUEUE_HEADER = """\
# rcb candidate queue: papers with code, posted after the models' knowledge cutoffs.
#
# Written by `rcb crawl`: sorted by score (highest first), then arXiv id. A crawl
# that finds nothing new leaves this file unchanged. `reasons` say where each
# point of `score` comes from.
#
# Triage in a pull request: set `status: rejected` (and a `note:` saying why) to
# drop a paper for good; `rcb task new ARXIV_ID` scaffolds a task from an entry.
# The crawler keeps `status` and `note`, and sets `status: task` (with `task:`)
# once a folder in tasks/ has the paper.
"""


class QueueLink(BaseModel):
    """A code link as stored in the queue."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["repository", "huggingface", "archive", "project page"]
    url: str


class Candidate(BaseModel):
    """One paper in the queue (its latest version seen)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    arxiv: str = Field(pattern=ARXIV_ID.pattern)
    version: int = Field(ge=1)
    title: str = Field(min_length=1)
    published: dt.date  # v1: the contamination clock
    updated: dt.date  # the latest version seen
    primary_category: str
    categories: list[str]
    domain: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    score: int
    reasons: list[str]
    status: Status = "new"
    task: str | None = None
    note: str | None = None
    code_links: list[QueueLink]
    authors: list[str] = Field(default_factory=list)
    comment: str | None = None
    abstract: str = ""


def parse_arxiv_id(text: str) -> tuple[str, int | None] | None:
    """``"2507.01234v2"`` to ``("2507.01234", 2)``; ``None`` when it is not a new-style id."""
    match = _VERSIONED_ID.match(text.strip())
    if not match:
        return None
    return match[1], int(match[2]) if match[2] else None


@dataclass
class Queue:
    """The queue file's entries by arXiv id."""

    path: Path
    candidates: dict[str, Candidate] = field(default_factory=dict)
    # Each entry's rendered lines, reused while the (frozen) entry is the same object.
    _rendered: dict[str, tuple[Candidate, list[str]]] = field(default_factory=dict, repr=False)

    def sorted(self) -> list[Candidate]:
        return sort_candidates(self.candidates.values())


def sort_candidates(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Highest score first, then by arXiv id: the file's order."""
    return sorted(candidates, key=lambda c: (-c.score, c.arxiv))


def _loader() -> type[yaml.SafeLoader]:
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_queue(path: Path) -> Queue:
    """Read the queue; a missing file is an empty queue.

    Raises:
        RcbError: the file is not valid YAML or an entry breaks the schema (one line
            naming the file and the key).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Queue(path)
    try:
        raw = yaml.load(text, Loader=_loader()) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise RcbError(f"{path}{where}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    entries = raw.get("candidates") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise RcbError(f"{path}: expected a top-level 'candidates:' list")
    queue = Queue(path)
    for index, entry in enumerate(entries):
        try:
            candidate = Candidate.model_validate(entry)
        except ValidationError as exc:
            line = format_validation_error(str(path), exc)
            raise RcbError(line.replace(": key '", f": key 'candidates.{index}.", 1)) from None
        if candidate.arxiv in queue.candidates:
            raise RcbError(
                f"{path}: key 'candidates.{index}': arXiv {candidate.arxiv} is listed twice"
            )
        queue.candidates[candidate.arxiv] = candidate
    return queue


# A string is written plain only when it cannot be read back as anything else.
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9._/+-]*(?::[A-Za-z0-9._/+-]+)*")
_NOT_PLAIN_WORDS = {"yes", "no", "true", "false", "on", "off", "null", "y", "n"}
_json_string = json.encoder.encode_basestring  # json.dumps(s, ensure_ascii=False), in C
# Characters YAML does not allow raw, or reads as line breaks inside quotes.
_ESCAPE = re.compile(
    r"[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029]"
)


def _scalar(value: object) -> str:
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in _NOT_PLAIN_WORDS:
            return value
        # A JSON string is a YAML double-quoted scalar; escape what YAML would not read as is.
        return _ESCAPE.sub(lambda m: f"\\u{ord(m[0]):04x}", _json_string(value))
    if isinstance(value, bool) or value is None:
        raise TypeError(f"the queue holds no {type(value).__name__} values")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    raise TypeError(f"the queue holds no {type(value).__name__} values")


def _entry(candidate: Candidate) -> list[str]:
    lines: list[str] = []
    data = candidate.model_dump(mode="python", exclude_none=True)
    for key, value in data.items():
        prefix = "- " if not lines else "  "
        if not isinstance(value, list):
            lines.append(f"{prefix}{key}: {_scalar(value)}")
        elif not value:
            lines.append(f"{prefix}{key}: []")
        else:
            lines.append(f"{prefix}{key}:")
            for item in value:
                if isinstance(item, dict):
                    pairs = [f"{k}: {_scalar(v)}" for k, v in item.items()]
                    lines.append("  - " + pairs[0])
                    lines += ["    " + pair for pair in pairs[1:]]
                else:
                    lines.append(f"  - {_scalar(item)}")
    return lines


def render_queue(
    candidates: Iterable[Candidate],
    cache: dict[str, tuple[Candidate, list[str]]] | None = None,
) -> str:
    """The file's text: the header, then the sorted entries, one key a line.

    Written directly rather than through PyYAML's representer, which takes seconds
    for thousands of entries; :func:`load_queue` reads it back with PyYAML.
    ``cache`` keeps each entry's lines between calls (a crawl writes after every page).
    """
    ordered = sort_candidates(candidates)
    if not ordered:
        return QUEUE_HEADER + "\ncandidates: []\n"
    lines = ["candidates:"]
    for candidate in ordered:
        cached = cache.get(candidate.arxiv) if cache is not None else None
        if cached is not None and cached[0] is candidate:
            lines += cached[1]
            continue
        entry = _entry(candidate)
        if cache is not None:
            cache[candidate.arxiv] = (candidate, entry)
        lines += entry
    return QUEUE_HEADER + "\n" + "\n".join(lines) + "\n"


def write_text_if_changed(path: Path, text: str) -> bool:
    """Write ``text`` atomically unless the file already holds it; True when written."""
    path = Path(path)
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def write_queue(queue: Queue) -> bool:
    """Write the queue file if its text changed; True when it did."""
    return write_text_if_changed(
        queue.path, render_queue(queue.candidates.values(), queue._rendered)
    )


def resolve_queue_path(explicit: Path | None = None) -> Path:
    """The queue file: the argument, else ``./crawler/queue.yaml``, else the checkout's."""
    if explicit is not None:
        return Path(explicit)
    here = Path.cwd() / "crawler"
    if here.is_dir():
        return here / "queue.yaml"
    return Path(__file__).with_name("queue.yaml")
