"""Read the results folders a site is built from, and say which results they were."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rcb_action.errors import RcbError
from rcb_action.reproduce import ReproductionRecord
from rcb_action.results import RESULTS_FILE, Record, combine_records, read_records
from rcb_action.site._reproduction import GOLD_FILE, REPRODUCTION_FILE, read_gold, read_reproduction


@dataclass(frozen=True)
class SiteInputs:
    """The records (one per key, sorted by key), reproduction runs, and their identity."""

    records: list[Record]
    reproduction: list[ReproductionRecord]
    gold: dict[str, dict[str, object]]
    fingerprint: str
    built_at: dt.datetime | None


def results_fingerprint(dirs: Sequence[Path]) -> str:
    """sha256 of every distinct line of the folders' results and reproduction files, in
    sorted order: the same results give the same fingerprint however they are split
    into folders or ordered within them."""
    digest = hashlib.sha256()
    for name in (RESULTS_FILE, REPRODUCTION_FILE, GOLD_FILE):
        lines: set[bytes] = set()
        for directory in dirs:
            path = Path(directory) / name
            if path.is_file():
                lines.update(line.strip() for line in path.read_bytes().split(b"\n"))
        lines.discard(b"")
        digest.update(name.encode() + b"\0")
        for line in sorted(lines):
            digest.update(line + b"\n")
    return digest.hexdigest()


def _parse_time(text: str) -> dt.datetime | None:
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def build_time(
    records: Sequence[Record],
    runs: Sequence[ReproductionRecord] = (),
    environ: Mapping[str, str] | None = None,
) -> dt.datetime | None:
    """``$SOURCE_DATE_EPOCH`` when set (reproducible builds), else the newest record's
    ``created_at``; None when neither is known.

    Raises:
        RcbError: ``SOURCE_DATE_EPOCH`` is not a whole number of seconds.
    """
    env = os.environ if environ is None else environ
    epoch = env.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        try:
            return dt.datetime.fromtimestamp(int(epoch), dt.UTC)
        except (ValueError, OverflowError, OSError):
            raise RcbError(
                f"SOURCE_DATE_EPOCH={epoch!r}: expected whole seconds since 1970 (or unset it)"
            ) from None
    stamps = [r.created_at for r in records] + [r.created_at for r in runs]
    moments = [m for m in map(_parse_time, filter(None, stamps)) if m]
    return max(moments).astimezone(dt.UTC) if moments else None


def load_results(dirs: Sequence[Path]) -> SiteInputs:
    """Records and reproduction runs of the results folders ``dirs``.

    A key present in several folders is resolved as ``rcb merge`` does.

    Raises:
        RcbError: a folder holds neither ``results.jsonl`` nor ``reproduction.jsonl``.
    """
    groups: list[list[Record]] = []
    runs: dict[tuple[str, str, int], ReproductionRecord] = {}
    gold: dict[str, dict[str, object]] = {}
    for directory in dirs:
        results, repro = Path(directory) / RESULTS_FILE, Path(directory) / REPRODUCTION_FILE
        if not results.is_file() and not repro.is_file():
            raise RcbError(
                f"{directory}: no {RESULTS_FILE} or {REPRODUCTION_FILE} here "
                "(give the --out folder of rcb evaluate or rcb merge)"
            )
        groups.append(read_records(results))
        for run in read_reproduction(repro):
            runs[run.key] = run
        gold.update(read_gold(Path(directory)))
    chosen = combine_records(groups)
    records = [chosen[key] for key in sorted(chosen)]
    repro_runs = [runs[key] for key in sorted(runs)]
    return SiteInputs(
        records=records,
        reproduction=repro_runs,
        gold=gold,
        fingerprint=results_fingerprint(dirs),
        built_at=build_time(records, repro_runs),
    )
