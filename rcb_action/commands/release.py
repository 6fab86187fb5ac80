"""rcb release: check a release tag, print its notes, write the thin action repository."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ORDER = 85


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "release",
        help="release steps: check the tag, the notes, the thin action repository",
        description="The steps of the release workflow (.github/workflows/release.yml), on a "
        "vX.Y.Z tag: check that the tag, pyproject.toml, rcb_action.__version__ and "
        "CHANGELOG.md agree; print the version's changelog section; write the thin action "
        "repository (rcb/evaluate) for the built source distribution.",
    )
    sub = parser.add_subparsers(dest="release_command", metavar="STEP")
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)

    p = sub.add_parser("check", help="the tag, the package version and the changelog agree")
    p.add_argument("--tag", required=True, help="vX.Y.Z")
    p.add_argument("--root", type=Path, default=Path("."), help="the checkout (default: here)")
    p.set_defaults(handler=run_check)

    p = sub.add_parser("notes", help="print the changelog section of a version")
    p.add_argument("--tag", required=True, help="vX.Y.Z")
    p.add_argument("--root", type=Path, default=Path("."), help="the checkout (default: here)")
    p.set_defaults(handler=run_notes)

    p = sub.add_parser(
        "action",
        help="write the thin action repository for a built source distribution",
        description="Write action.yml, README.md and LICENSE of the thin action repository "
        "into --out (emptied first, .git kept): rcb's action.yml with a first step that "
        "downloads this sdist and checks its sha256. No workflow files.",
    )
    p.add_argument("--sdist", type=Path, required=True, help="dist/rcb-X.Y.Z.tar.gz")
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--root", type=Path, default=Path("."), help="the checkout (default: here)")
    p.set_defaults(handler=run_action)


def run_check(args: argparse.Namespace) -> int:
    from rcb_action.github import check_release, set_outputs

    version = check_release(args.tag, args.root)
    set_outputs({"version": version, "major": f"v{version.split('.')[0]}"})
    return 0


def run_notes(args: argparse.Namespace) -> int:
    from rcb_action.github import changelog_notes, version_of_tag

    text = (args.root / "CHANGELOG.md").read_text(encoding="utf-8")
    sys.stdout.write(changelog_notes(text, version_of_tag(args.tag)))
    return 0


def run_action(args: argparse.Namespace) -> int:
    from rcb_action.github import write_action_repository

    for path in write_action_repository(args.root, args.sdist, args.out):
        print(f"rcb: wrote {path}", file=sys.stderr)
    return 0
