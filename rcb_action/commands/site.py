"""rcb site build: the static leaderboard site from results folders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rcb_action.commands._common import add_registry, add_tasks_dir

ORDER = 45


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "site",
        help="build the static leaderboard site",
        description="The leaderboard as static HTML: no server, no requests outside the site.",
    )
    actions = parser.add_subparsers(dest="site_command", metavar="ACTION")
    build = actions.add_parser(
        "build",
        help="render the site from results folders",
        description="Render the leaderboard, one page per task and per model, the paper ablation, "
        "the reproduction track and the methodology from results folders (rcb evaluate or "
        "rcb merge output; an optional reproduction.jsonl is read too). The same results give "
        "the same bytes; set SOURCE_DATE_EPOCH to fix the build time shown.",
    )
    build.add_argument(
        "dirs", nargs="+", type=Path, metavar="DIR", help="results folder(s) to publish"
    )
    build.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="site folder to write (replaced if it holds an earlier build)",
    )
    add_tasks_dir(build)
    add_registry(build)
    build.set_defaults(handler=run_build)
    parser.set_defaults(handler=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def run_build(args: argparse.Namespace) -> int:
    from rcb_action.site import build_site

    built = build_site(args.dirs, args.out, tasks_dir=args.tasks_dir, registry_files=args.registry)
    print(
        f"rcb: site built in {built.out}: {len(built.files)} files, {built.bytes / 1e6:.2f} MB, "
        f"{built.records} records (results sha256:{built.fingerprint[:12]})",
        file=sys.stderr,
    )
    return 0
