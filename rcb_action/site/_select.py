"""Which attempts each score is computed from (the same choice as ``rcb report``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from rcb_action.results import Record


def by_model(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Records grouped by model, models in sorted order."""
    groups: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        groups[record.model].append(record)
    return dict(sorted(groups.items()))


def with_paper(records: Iterable[Record]) -> list[Record]:
    return [r for r in records if r.paper == "with" and r.agent_turns == 0]


def without_paper(records: Iterable[Record]) -> list[Record]:
    return [r for r in records if r.paper == "without" and r.agent_turns == 0]


def headline(records: Sequence[Record]) -> list[Record]:
    """One model's attempts behind its headline score: with the paper when it was
    given, else the no-paper runs (as ``rcb report`` does)."""
    return with_paper(records) or without_paper(records)


def headlines(records: Iterable[Record]) -> dict[str, list[Record]]:
    """Each model's headline attempts (every status), models in sorted order."""
    return {model: headline(recs) for model, recs in by_model(records).items()}


def scored_only(groups: dict[str, list[Record]]) -> dict[str, list[Record]]:
    """The same groups without harness errors and skips."""
    return {model: [r for r in recs if r.scored] for model, recs in groups.items()}
