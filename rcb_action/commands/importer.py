"""rcb import: turn another benchmark's tasks into rcb tasks."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ORDER = 70


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import",
        help="import another benchmark's tasks (ResearchCodeBench)",
        description="Turn another benchmark's tasks into rcb task folders.",
    )
    sources = parser.add_subparsers(dest="import_source", metavar="SOURCE", required=True)
    rcb = sources.add_parser(
        "rcb",
        help="a ResearchCodeBench checkout",
        description="Write one rcb task per paper of a ResearchCodeBench checkout (pset/papers.yaml) into "
        "--out, so its papers run unchanged under rcb. Then: rcb validate OUT; "
        "rcb evaluate --tasks-dir OUT --model ...",
    )
    rcb.add_argument("checkout", type=Path, metavar="RCB_CHECKOUT")
    rcb.add_argument("--out", type=Path, required=True, metavar="DIR", help="tasks folder to write")
    rcb.add_argument("--env", default="researchcodebench", help="environment name for the tasks")
    rcb.add_argument(
        "--requirements", type=Path, default=None, metavar="FILE",
        help="the base environment's pinned requirements, which also pin what a paper's tests "
        "import before the checkout's environment.yml does (default: the checkout's "
        "requirements.txt without its local conda-build lines, else numpy, scipy, CPU torch, "
        "pytest). A package a paper needs that nothing pins leaves that paper out, with the reason",
    )  # fmt: skip
    rcb.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.importers import import_researchcodebench

    if args.requirements is not None and not args.requirements.is_file():
        raise RcbError(f"--requirements {args.requirements}: file not found")
    results = import_researchcodebench(
        args.checkout, args.out, env=args.env, requirements=args.requirements
    )
    done = [r for r in results if r.task_dir is not None]
    for result in results:
        if result.task_dir is not None:
            print(
                f"ok    {result.paper_id} -> {result.task_dir} ({result.snippets} snippets)",
                file=sys.stderr,
            )
        else:
            print(f"skip  {result.paper_id}: {result.problem}", file=sys.stderr)
    print(f"rcb: imported {len(done)} of {len(results)} paper(s) into {args.out}")
    return 0 if len(done) == len(results) else 1
