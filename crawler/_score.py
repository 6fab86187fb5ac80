"""Scoring a candidate: code link, recency against the models' cutoffs, category, domain.

Every point comes with a reason that is stored in the queue, so a maintainer
reading the diff sees why a paper ranks where it does. Scores depend only on
the paper and the models registry (never on the day of the crawl), so a rerun
with nothing new gives the same numbers.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from crawler._links import CodeLink, best_link

# Primary category (exact, then its archive prefix) to the task domain written in task.yaml.
_DOMAIN_EXACT: dict[str, str] = {
    "cs.LG": "ml",
    "cs.AI": "ml",
    "cs.CL": "ml",
    "cs.CV": "ml",
    "cs.NE": "ml",
    "cs.IR": "ml",
    "cs.MA": "ml",
    "cs.RO": "ml",
    "stat.ML": "ml",
    "cond-mat.mtrl-sci": "materials",
    "physics.ao-ph": "climate",
    "physics.chem-ph": "chemistry",
    "math.NA": "numerics",
    "cs.NA": "numerics",
}
_DOMAIN_ARCHIVE: dict[str, str] = {
    "q-bio": "biology",
    "q-fin": "finance",
    "cond-mat": "physics",
    "physics": "physics",
    "quant-ph": "physics",
    "astro-ph": "astronomy",
    "gr-qc": "physics",
    "hep-ph": "physics",
    "hep-th": "physics",
    "hep-ex": "physics",
    "hep-lat": "physics",
    "nucl-th": "physics",
    "nlin": "physics",
    "stat": "statistics",
    "math": "mathematics",
    "econ": "economics",
    "eess": "engineering",
    "cs": "computing",
}
# Categories whose papers usually come with a method small enough to test: +1.
COMPUTATIONAL_CATEGORIES: frozenset[str] = frozenset(
    {
        "cs.LG",
        "stat.ML",
        "stat.CO",
        "physics.comp-ph",
        "physics.ao-ph",
        "physics.chem-ph",
        "cond-mat.mtrl-sci",
        "q-bio.QM",
        "q-bio.BM",
        "q-bio.GN",
        "q-fin.CP",
        "q-fin.MF",
        "q-fin.ST",
        "math.NA",
        "cs.NA",
        "astro-ph.IM",
    }
)
DOMAIN_POINTS = 2  # a paper outside ML widens the benchmark beyond one field
RECENCY_POINTS_ALL = 2  # after every registered cutoff: unseen by every model
RECENCY_POINTS_SOME = 1


def domain_of(primary_category: str) -> str:
    """The task domain for an arXiv primary category (``ml``, ``biology``, ``finance``, ...)."""
    exact = _DOMAIN_EXACT.get(primary_category)
    if exact:
        return exact
    return _DOMAIN_ARCHIVE.get(primary_category.split(".", 1)[0], "other")


@dataclass(frozen=True)
class Cutoffs:
    """The registry's knowledge cutoffs, sorted, for counting how many a date is after."""

    dates: tuple[dt.date, ...]

    @classmethod
    def of(cls, dates: Iterable[dt.date | None]) -> Cutoffs:
        return cls(tuple(sorted(d for d in dates if d is not None)))

    def models_before(self, published: dt.date) -> int:
        """How many cutoffs fall strictly before ``published`` (models that cannot have seen it)."""
        return bisect.bisect_left(self.dates, published)

    @property
    def latest(self) -> dt.date | None:
        return self.dates[-1] if self.dates else None


def score(
    *,
    links: list[CodeLink],
    published: dt.date,
    primary_category: str,
    domain: str,
    cutoffs: Cutoffs,
) -> tuple[int, list[str]]:
    """Points and their reasons, one line per component that earned any."""
    points = 0
    reasons: list[str] = []
    link = best_link(links)
    if link is not None:
        points += link.points
        reasons.append(f"code: {link.kind} {link.url} (+{link.points})")
    total = len(cutoffs.dates)
    if total:
        unseen = cutoffs.models_before(published)
        if unseen == total:
            points += RECENCY_POINTS_ALL
            reasons.append(
                f"recency: submitted {published}, after every registered cutoff "
                f"(latest {cutoffs.latest}) (+{RECENCY_POINTS_ALL})"
            )
        elif unseen:
            points += RECENCY_POINTS_SOME
            reasons.append(
                f"recency: submitted {published}, after {unseen} of {total} registered cutoffs "
                f"(+{RECENCY_POINTS_SOME})"
            )
    if primary_category in COMPUTATIONAL_CATEGORIES:
        points += 1
        reasons.append(f"category: {primary_category} is a computational category (+1)")
    if domain != "ml":
        points += DOMAIN_POINTS
        reasons.append(f"domain: {domain}, outside machine learning (+{DOMAIN_POINTS})")
    return points, reasons
