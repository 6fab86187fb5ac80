"""Geometry for the site's inline SVG charts (the templates draw; this measures)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    """A piece of a 100-unit-wide stacked bar."""

    key: str
    x: float
    width: float
    count: int


def stacked(counts: Mapping[str, int], order: Sequence[str]) -> list[Segment]:
    """Segments of a bar split by ``counts`` in ``order``, scaled to 100 units."""
    total = sum(counts.get(k, 0) for k in order)
    segments: list[Segment] = []
    x = 0.0
    for key in order:
        count = counts.get(key, 0)
        if not count:
            continue
        width = 100.0 * count / total
        segments.append(Segment(key, round(x, 3), round(width, 3), count))
        x += width
    return segments
