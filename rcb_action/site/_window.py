"""The contamination window: rank models on the snippets of papers published in a
date range, leaving unranked the models whose knowledge cutoff does not precede it.

:func:`window_ranking` is the reference; the site's ``site.js`` computes the same
ranking in the browser from :func:`window_data`, and the browser tests hold the two
to the same numbers. The rules, shared by both:

- In scope: each model's headline attempts (see :mod:`rcb_action.site._select`)
  that were scored, of papers with ``start <= published <= end``.
- Scores: scaled pass@1 and the unweighted pass rate of :mod:`rcb_action.scoring`.
- Contaminated: the model's knowledge cutoff is on or after ``start`` (a paper
  posted on the cutoff day may have been read, as in the report's post-cutoff
  subset), or the model has no known cutoff (any paper may have been read): it is
  marked in every window and never ranked there. A cutoff only the submitter declared
  (:meth:`rcb_action.models.Registry.declared_cutoff`) is not known to rcb: such a
  model is treated as one with no cutoff, and its row says that the cutoff it shows
  was declared.
- Ranked: models neither contaminated nor without results in the window, by score
  (rounded to 1e-6) then model id; equal scores share a rank. Unranked rows follow,
  those with a score first (same order), then those without.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rcb_action.models import Registry
from rcb_action.report import outcomes_of
from rcb_action.results import Record
from rcb_action.scoring import pass_rate, scaled_pass_at_1
from rcb_action.site._select import headlines, scored_only

MIN_WINDOW_SNIPPETS = 30


@dataclass(frozen=True)
class WindowRow:
    """One model's line in the window table."""

    model: str
    cutoff: dt.date | None
    scaled_pass_at_1: float | None
    pass_rate: float | None
    snippets: int
    contaminated: bool
    rank: int | None
    declared: dt.date | None = None  # the submitter's cutoff: shown, never ranked on


@dataclass(frozen=True)
class WindowResult:
    """The window, how many snippets (and papers) it holds, and the rows in display order."""

    start: dt.date
    end: dt.date
    snippets: int
    papers: int
    rows: list[WindowRow]

    @property
    def too_few(self) -> bool:
        """Fewer snippets than :data:`MIN_WINDOW_SNIPPETS`: the ranking is noise-prone."""
        return self.snippets < MIN_WINDOW_SNIPPETS


def score_key(score: float) -> int:
    """The score as ranked: rounded to 1e-6 so that the browser and Python agree on ties
    whatever the order in which they summed."""
    return math.floor(score * 1e6 + 0.5)


Scored = Mapping[str, Sequence[Record]]
"""Each model's scored headline attempts (see :func:`rcb_action.site._select.scored_only`)."""


def window_ranking(
    records: Sequence[Record], registry: Registry, start: dt.date, end: dt.date
) -> WindowResult:
    """Rank every model in ``records`` on the papers published from ``start`` to
    ``end`` (both included)."""
    return rank_window(scored_only(headlines(records)), registry, start, end)


def rank_window(scored: Scored, registry: Registry, start: dt.date, end: dt.date) -> WindowResult:
    """:func:`window_ranking` from attempts already grouped and filtered."""
    rows: list[WindowRow] = []
    snippets: set[tuple[str, str]] = set()
    for model, recs in scored.items():
        inside = sorted(
            (r for r in recs if start <= r.published <= end),
            key=lambda r: (r.sample, r.task, r.snippet),
        )
        outcomes = outcomes_of(inside)
        keys = {(o.task, o.snippet) for o in outcomes}
        snippets |= keys
        cutoff = registry.cutoff(model)
        rows.append(
            WindowRow(
                model=model,
                cutoff=cutoff,
                scaled_pass_at_1=scaled_pass_at_1(outcomes),
                pass_rate=pass_rate(outcomes),
                snippets=len(keys),
                contaminated=cutoff is None or cutoff >= start,
                rank=None,
                declared=registry.declared_cutoff(model),
            )
        )
    ranked = [r for r in rows if r.scaled_pass_at_1 is not None and not r.contaminated]
    keys_ranked = [score_key(r.scaled_pass_at_1 or 0.0) for r in ranked]
    ranks = {
        r.model: 1 + sum(k > key for k in keys_ranked)
        for r, key in zip(ranked, keys_ranked, strict=True)
    }

    def order(row: WindowRow) -> tuple[int, int, str]:
        if row.scaled_pass_at_1 is None:
            return (2, 0, row.model)
        group = 1 if row.contaminated else 0
        return (group, -score_key(row.scaled_pass_at_1), row.model)

    ordered = [replace(row, rank=ranks.get(row.model)) for row in sorted(rows, key=order)]
    papers = len({task for task, _ in snippets})
    return WindowResult(start, end, len(snippets), papers, ordered)


def default_window(records: Sequence[Record], registry: Registry) -> tuple[dt.date, dt.date] | None:
    """From the first paper after every listed model's cutoff (all of them clean)
    to the newest paper; from the oldest paper when no paper is that new. None when
    nothing was scored."""
    return pick_default_window(scored_only(headlines(records)), registry)


def pick_default_window(scored: Scored, registry: Registry) -> tuple[dt.date, dt.date] | None:
    """:func:`default_window` from attempts already grouped and filtered."""
    dates = sorted({r.published for recs in scored.values() for r in recs})
    if not dates:
        return None
    cutoffs = [c for c in (registry.cutoff(m) for m in scored) if c is not None]
    after = [d for d in dates if not cutoffs or d > max(cutoffs)]
    return (after[0] if after else dates[0], dates[-1])


def window_data(
    records: Sequence[Record], registry: Registry, models: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """The compact per-snippet data ``site.js`` ranks from.

    ``models`` gives, per model id, what the table shows (``name``, ``provider``,
    ``href``). Each model's results are one string, a character per snippet and
    sample (``1`` passed, ``0`` failed, ``.`` not scored); a record whose weight or
    date differs from its snippet's (results from another version of the task) is
    listed in ``o`` by position.
    """
    return encode_window(scored_only(headlines(records)), registry, models)


def encode_window(
    scored: Scored, registry: Registry, models: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    """:func:`window_data` from attempts already grouped and filtered."""
    canonical: dict[tuple[str, str], tuple[int, str]] = {}
    for recs in scored.values():
        for r in recs:
            if (r.task, r.snippet) not in canonical:
                canonical[(r.task, r.snippet)] = (r.weight, r.published.isoformat())
    snippet_keys = sorted(canonical)
    index = {key: i for i, key in enumerate(snippet_keys)}
    task_ids = sorted({task for task, _ in snippet_keys})
    task_dates: dict[str, str] = {}
    for task, snippet in snippet_keys:
        task_dates.setdefault(task, canonical[(task, snippet)][1])
    task_index = {t: i for i, t in enumerate(task_ids)}
    day: dict[dt.date, str] = {}
    encoded_models = []
    for model, recs in scored.items():
        samples = sorted({r.sample for r in recs})
        column = {s: j for j, s in enumerate(samples)}
        cells = ["."] * (len(snippet_keys) * len(samples))
        overrides: dict[str, list[Any]] = {}
        for r in recs:
            key = (r.task, r.snippet)
            pos = index[key] * len(samples) + column[r.sample]
            cells[pos] = "1" if r.passed else "0"
            published = day.get(r.published) or day.setdefault(r.published, r.published.isoformat())
            if r.weight != canonical[key][0] or published != task_dates[r.task]:
                overrides[str(pos)] = [r.weight, published]
        cutoff = registry.cutoff(model)
        declared = registry.declared_cutoff(model)
        meta = models.get(model, {})
        encoded_models.append(
            {
                "id": model,
                "name": meta.get("name", model),
                "provider": meta.get("provider", ""),
                "href": meta.get("href", ""),
                "cutoff": cutoff.isoformat() if cutoff else None,
                "declared": declared.isoformat() if declared else None,
                "samples": samples,
                "r": "".join(cells),
                "o": overrides,
            }
        )
    window = pick_default_window(scored, registry)
    return {
        "tasks": [[t, task_dates[t]] for t in task_ids],
        "snippets": [[task_index[t], canonical[(t, s)][0]] for t, s in snippet_keys],
        "dates": sorted(set(task_dates.values())),
        "models": encoded_models,
        "default": [d.isoformat() for d in window] if window else None,
        "min_snippets": MIN_WINDOW_SNIPPETS,
    }
