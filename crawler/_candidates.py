"""From arXiv entries to candidates: validate, find code, deduplicate across versions, score."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from crawler._links import CodeLink, find_code_links
from crawler._queue import Candidate, QueueLink, parse_arxiv_id
from crawler._score import Cutoffs, domain_of, score

MAX_AUTHORS = 10
_SPACE = re.compile(r"\s+")


def _clean(text: str | None) -> str:
    return _SPACE.sub(" ", text or "").strip()


def category_matcher(patterns: Iterable[str]) -> Callable[[Iterable[str]], bool]:
    """A test for "is one of these categories in ``patterns``" (``cs.LG``, ``q-bio.*``, ``q-bio``)."""
    exact: set[str] = set()
    prefixes: list[str] = []
    for pattern in patterns:
        if pattern.endswith(".*"):
            prefixes.append(pattern[:-1])
        elif "." not in pattern:
            exact.add(pattern)
            prefixes.append(pattern + ".")
        else:
            exact.add(pattern)
    prefix_tuple = tuple(prefixes)

    def matches(categories: Iterable[str]) -> bool:
        return any(c in exact or c.startswith(prefix_tuple) for c in categories)

    return matches


def task_papers(tasks_dir: Path | None) -> dict[str, str]:
    """arXiv id to task id for every task folder (read leniently: a task in progress counts)."""
    if tasks_dir is None or not tasks_dir.is_dir():
        return {}
    found: dict[str, str] = {}
    for path in sorted(tasks_dir.glob("*/task.yaml")):
        if path.parent.name.startswith(("_", ".")):
            continue
        try:
            raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(raw, dict) and raw.get("arxiv") is not None:
            found[str(raw["arxiv"])] = path.parent.name
    return found


def with_score(candidate: Candidate, cutoffs: Cutoffs) -> Candidate:
    """The candidate rescored against ``cutoffs`` (from its stored links and metadata)."""
    links = [CodeLink(link.kind, link.url) for link in candidate.code_links]
    points, reasons = score(
        links=links,
        published=candidate.published,
        primary_category=candidate.primary_category,
        domain=candidate.domain,
        cutoffs=cutoffs,
    )
    if points == candidate.score and reasons == candidate.reasons:
        return candidate
    return candidate.model_copy(update={"score": points, "reasons": reasons})


def merge(existing: Candidate | None, fresh: Candidate) -> Candidate:
    """The newer version's metadata, keeping the maintainers' ``status`` and ``note``.

    An older version than the one stored never overwrites it, so the order the
    feed lists versions in does not matter.
    """
    if existing is None:
        return fresh
    if fresh.version < existing.version:
        return existing
    return fresh.model_copy(
        update={"status": existing.status, "note": existing.note, "task": existing.task}
    )


@dataclass
class Collector:
    """Turns arXiv results into candidates, deduplicated by arXiv id (latest version wins).

    ``counts`` says what happened to every entry seen: ``kept``, ``no_code``,
    ``before_since``, ``other_category``, ``already_task``, ``malformed``,
    ``duplicate`` (the same version read twice).
    """

    since: dt.date
    categories: tuple[str, ...]
    cutoffs: Cutoffs
    tasks: dict[str, str] = field(default_factory=dict)
    found: dict[str, Candidate] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)
    on_warning: Callable[[str], None] | None = None

    def __post_init__(self) -> None:
        self._in_categories = category_matcher(self.categories)
        self._seen: set[tuple[str, int]] = set()

    def warn(self, message: str) -> None:
        self.warnings.append(message)
        if self.on_warning is not None:
            self.on_warning(message)

    def _malformed(self, label: str, why: str) -> None:
        self.counts["malformed"] += 1
        self.warn(f"arXiv entry {label}: {why}; skipped")

    def add(self, result: Any) -> Candidate | None:
        """Take one ``arxiv.Result``; the candidate it gave, or None when it was dropped."""
        entry_id = str(getattr(result, "entry_id", "") or "")
        short = entry_id.rsplit("/abs/", 1)[-1] if "/abs/" in entry_id else entry_id
        parsed = parse_arxiv_id(short)
        if parsed is None or parsed[1] is None:
            self._malformed(entry_id or "(no id)", "not a versioned new-style arXiv id")
            return None
        arxiv_id, version = parsed[0], parsed[1]
        if (arxiv_id, version) in self._seen:
            # The same version again: pages overlap when the package skips an entry.
            self.counts["duplicate"] += 1
            return None
        self._seen.add((arxiv_id, version))
        title = _clean(getattr(result, "title", ""))
        if not title:
            self._malformed(short, "no title")
            return None
        published_at = getattr(result, "published", None)
        updated_at = getattr(result, "updated", None)
        if not isinstance(published_at, dt.datetime) or published_at.year < 1991:
            self._malformed(short, "no submission date")
            return None
        categories = [str(c) for c in (getattr(result, "categories", None) or [])]
        primary = str(
            getattr(result, "primary_category", "") or (categories[0] if categories else "")
        )
        if not primary:
            self._malformed(short, "no category")
            return None
        published = published_at.astimezone(dt.UTC).date()
        if published < self.since:
            self.counts["before_since"] += 1
            return None
        if not self._in_categories([primary, *categories]):
            self.counts["other_category"] += 1
            return None
        if arxiv_id in self.tasks:
            self.counts["already_task"] += 1
            return None
        abstract = _clean(getattr(result, "summary", ""))
        comment = _clean(getattr(result, "comment", None)) or None
        links = find_code_links(abstract, comment)
        if not links:
            self.counts["no_code"] += 1
            return None
        domain = domain_of(primary)
        points, reasons = score(
            links=links,
            published=published,
            primary_category=primary,
            domain=domain,
            cutoffs=self.cutoffs,
        )
        names = [_clean(getattr(a, "name", str(a))) for a in getattr(result, "authors", [])]
        if len(names) > MAX_AUTHORS:
            names = [*names[:MAX_AUTHORS], f"and {len(names) - MAX_AUTHORS} more"]
        updated = (
            updated_at.astimezone(dt.UTC).date()
            if isinstance(updated_at, dt.datetime) and updated_at.year >= 1991
            else published
        )
        candidate = Candidate(
            arxiv=arxiv_id,
            version=version,
            title=title,
            published=published,
            updated=max(updated, published),
            primary_category=primary,
            categories=list(dict.fromkeys(categories or [primary])),
            domain=domain,
            score=points,
            reasons=reasons,
            code_links=[QueueLink(kind=link.kind, url=link.url) for link in links],
            authors=names,
            comment=comment,
            abstract=abstract,
        )
        self.counts["kept"] += 1
        self.found[arxiv_id] = merge(self.found.get(arxiv_id), candidate)
        return candidate

    def take(self) -> dict[str, Candidate]:
        """The candidates gathered since the last call (and forget them)."""
        found, self.found = self.found, {}
        return found
