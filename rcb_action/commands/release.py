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

    p = sub.add_parser(
        "publish",
        help="the GitHub release with the built files; move the major tag vX",
        description="Create the GitHub release of --tag in GITHUB_REPOSITORY (GITHUB_TOKEN, "
        "contents: write) with the tag's CHANGELOG.md section as notes and every file of "
        "--dist attached, then move the major tag vX to the tag's commit. A rerun updates "
        "the notes and uploads only what is missing.",
    )
    p.add_argument("--tag", required=True, help="vX.Y.Z")
    p.add_argument("--dist", type=Path, required=True, metavar="DIR", help="the built files")
    p.add_argument("--root", type=Path, default=Path("."), help="the checkout (default: here)")
    p.set_defaults(handler=run_publish)

    p = sub.add_parser(
        "push-action",
        help="commit the thin action repository's files, tag vX.Y.Z and move vX there",
        description="Commit exactly the files of --files (from rcb release action) on the "
        "default branch of --repo, tag the commit --tag and move the major tag vX to it. The "
        "token is RCB_ACTION_REPO_TOKEN (contents: write on that repository only).",
    )
    p.add_argument("--tag", required=True, help="vX.Y.Z")
    p.add_argument("--files", type=Path, required=True, metavar="DIR")
    p.add_argument("--repo", default="rcb/evaluate", help="owner/name (default rcb/evaluate)")
    p.set_defaults(handler=run_push_action)


def run_check(args: argparse.Namespace) -> int:
    from rcb_action.github import check_release, major_tag, set_outputs

    version = check_release(args.tag, args.root)
    set_outputs({"version": version, "major": major_tag(version)})
    return 0


def run_notes(args: argparse.Namespace) -> int:
    from rcb_action.github import release_notes

    sys.stdout.write(release_notes(args.root, args.tag))
    return 0


def run_action(args: argparse.Namespace) -> int:
    from rcb_action.github import write_action_repository

    for path in write_action_repository(args.root, args.sdist, args.out):
        print(f"rcb: wrote {path}", file=sys.stderr)
    return 0


def run_publish(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.github import GitHubContext, github_client, publish_release, release_notes

    context = GitHubContext.from_env()
    if not context.repository:
        raise RcbError("GITHUB_REPOSITORY is not set: the repository to release in (owner/name)")
    assets = sorted(p for p in args.dist.glob("*") if p.is_file())
    if not assets:
        raise RcbError(f"--dist {args.dist}: no built files (python -m build, or the build job)")
    notes = release_notes(args.root, args.tag)
    repo = github_client(context).get_repo(context.repository)
    sha = publish_release(repo, args.tag, notes, assets)
    print(f"rcb: released {args.tag} in {context.repository} at {sha[:12]}", file=sys.stderr)
    return 0


def run_push_action(args: argparse.Namespace) -> int:
    import os
    from dataclasses import replace

    from rcb_action.errors import RcbError
    from rcb_action.github import GitHubContext, github_client, publish_action_repository

    token = os.environ.get("RCB_ACTION_REPO_TOKEN", "")
    if not token:
        raise RcbError(
            "RCB_ACTION_REPO_TOKEN is not set: a token with contents: write on "
            f"{args.repo} (the job's own token cannot write to another repository)"
        )
    context = replace(GitHubContext.from_env(), token=token)
    repo = github_client(context).get_repo(args.repo)
    sha = publish_action_repository(repo, args.tag, args.files)
    print(f"rcb: {args.repo} at {sha[:12]}, tagged {args.tag}", file=sys.stderr)
    return 0
