"""rcb merge: join shards' results folders into one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ORDER = 40


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "merge",
        help="merge results folders (shards) into one",
        description="Join the results of several rcb evaluate runs (e.g. --shard 1/4 ... 4/4) into one "
        "folder. The output is sorted and deterministic; the logs of the records kept are copied "
        "along. Two different models whose logs share one folder (results of an older rcb) are "
        "refused, so that one model's logs never replace another's.",
    )
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rcb_action.results import merge_stores

    count = merge_stores(args.dirs, args.out)
    print(
        f"rcb: merged {count} records from {len(args.dirs)} folder(s) into {args.out}",
        file=sys.stderr,
    )
    return 0
