"""rcb paper: fetch the papers tasks pin (arXiv LaTeX, cached) and show the text a model gets."""

from __future__ import annotations

import argparse
import sys

from rcb_action.commands._common import add_tasks_dir

ORDER = 35


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "paper",
        help="fetch and show the papers prompts carry",
        description="A task's paper is the LaTeX source of its pinned arXiv version "
        "(task.yaml 'arxiv' and 'arxiv_version'), flattened, with comments, figures and the "
        "bibliography removed, cached in $RCB_CACHE_DIR/papers/<id>v<n>.tex; or a full text "
        "the task vendors under an open licence. Nothing else is ever given in its place.",
    )
    commands = parser.add_subparsers(dest="paper_command", metavar="ACTION", required=True)
    fetch = commands.add_parser(
        "fetch",
        help="download and cache the papers of TASK... (all tasks by default)",
        description="Download each task's pinned e-print from arXiv once (one request at a "
        "time, a pause between requests, retries with backoff) and cache its text, so that "
        "`rcb evaluate` and a model's `rcb reproduce` need no network. Cached papers are not fetched again. "
        "$RCB_ARXIV_URL overrides arXiv's address.",
    )
    fetch.add_argument("tasks", nargs="*", metavar="TASK", help="task ids or globs")
    fetch.add_argument(
        "--check",
        action="store_true",
        help="fetch nothing: exit 1 unless every paper is already cached (or vendored)",
    )
    add_tasks_dir(fetch)
    fetch.set_defaults(handler=run_fetch)
    key = commands.add_parser(
        "key",
        help="print a cache key for the papers TASK... pin (CI caches)",
        description="Print 'rcb-papers-<hash>': a hash of the arXiv ids and versions the "
        "tasks pin (and of the cleaner's version). A cache of $RCB_CACHE_DIR/papers saved "
        "under this key holds every paper these tasks need; versions never change.",
    )
    key.add_argument("tasks", nargs="*", metavar="TASK", help="task ids or globs")
    add_tasks_dir(key)
    key.set_defaults(handler=run_key)
    show = commands.add_parser(
        "show",
        help="print the paper text a model gets for TASK",
        description="Print the exact paper text prompts for TASK carry (fetched once and "
        "cached if need be); its paper_sha goes to stderr.",
    )
    show.add_argument("task_id", metavar="TASK")
    show.add_argument(
        "--notes", action="store_true", help="the task's notes.md instead (--paper notes)"
    )
    add_tasks_dir(show)
    show.set_defaults(handler=run_show)


def run_fetch(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.papers import PaperUnavailable, cached_paper, fetch_paper, pinned_name
    from rcb_action.tasks import load_tasks, resolve_tasks_dir

    pattern = ",".join(args.tasks) if args.tasks else None
    # Snippet and reproduction tasks alike: a reproduction agent and its judge read the
    # paper too.
    tasks = load_tasks(resolve_tasks_dir(args.tasks_dir), pattern)
    if not tasks:
        raise RcbError(f"rcb paper fetch {pattern or ''}: no task matches".replace("  ", " "))
    failed: list[str] = []
    missing = 0
    for number, task in enumerate(tasks, 1):
        where = pinned_name(task) or f"{task.config.paper.file} ({task.config.paper.source})"
        prefix = f"[{number}/{len(tasks)}] {task.id}: {where}"
        try:
            had = cached_paper(task) is not None
            if args.check:
                print(f"{prefix}: {'cached' if had else 'not cached'}", flush=True)
                missing += 0 if had else 1
                continue
            paper = fetch_paper(task)
        except PaperUnavailable as exc:
            print(f"{prefix}: failed", flush=True)
            failed.append(str(exc))
            continue
        state = (
            task.config.paper.source
            if task.config.paper.in_task
            else "cached"
            if had
            else "fetched"
        )
        print(f"{prefix}: {state}, {len(paper.text)} chars, paper_sha {paper.sha}", flush=True)
    if args.check:
        return 1 if missing or failed else 0
    if failed:
        for message in failed[1:]:
            print(f"rcb: error: {message}", file=sys.stderr)
        raise PaperUnavailable(failed[0])
    return 0


def run_key(args: argparse.Namespace) -> int:
    import hashlib

    from rcb_action.papers import CLEANER_VERSION, pinned_name
    from rcb_action.tasks import load_tasks, resolve_tasks_dir

    pattern = ",".join(args.tasks) if args.tasks else None
    pins = sorted(
        {
            name
            for t in load_tasks(resolve_tasks_dir(args.tasks_dir), pattern)
            if (name := pinned_name(t))
        }
    )
    text = f"cleaner {CLEANER_VERSION}\n" + "".join(f"{pin}\n" for pin in pins)
    print(f"rcb-papers-{hashlib.sha256(text.encode()).hexdigest()[:20]}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.papers import notes_for, paper_for
    from rcb_action.tasks import load_task, resolve_tasks_dir

    root = resolve_tasks_dir(args.tasks_dir) / args.task_id
    if not (root / "task.yaml").is_file():
        raise RcbError(f"{root}: no such task (see the folders under {root.parent})")
    task = load_task(root)
    text = notes_for(task) if args.notes else paper_for(task)
    sys.stdout.write(text.text)
    print(f"paper_sha {text.sha} ({text.origin}, {len(text.text)} chars)", file=sys.stderr)
    return 0
