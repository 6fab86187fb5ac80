"""rcb crawl: find fresh arXiv papers with code and queue them for maintainers."""

from __future__ import annotations

import argparse
import datetime as dt
import re
from pathlib import Path
from typing import TYPE_CHECKING

from rcb_action.commands._common import add_registry, add_tasks_dir
from rcb_action.errors import RcbError

if TYPE_CHECKING:
    from crawler import IssueTracker

ORDER = 70
_CATEGORY = re.compile(r"^[a-z][a-z-]*(\.[A-Za-z][A-Za-z-]*|\.\*)?$")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 (got {value})")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative (got {value})")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative (got {text})")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "crawl",
        help="find fresh arXiv papers with code and add them to the candidate queue",
        description="Walk arXiv (politely: 3 s between requests, with retries) for papers "
        "submitted after a date, keep those with a code link, score them and merge them into "
        "the candidate queue (crawler/queue.yaml). Interrupted or --max-limited crawls "
        "continue where they stopped when run again with the same options.",
    )
    when = parser.add_mutually_exclusive_group()
    when.add_argument(
        "--since", metavar="YYYY-MM-DD", default=None, help="papers submitted on or after this day"
    )
    when.add_argument(
        "--after-cutoff",
        action="store_true",
        help="papers submitted after the latest knowledge cutoff in the models registry (the default)",
    )
    parser.add_argument(
        "--categories",
        nargs="+",
        default=None,
        metavar="CAT",
        help="arXiv categories, wildcards allowed (default: cs.LG stat.ML q-bio.* "
        "cond-mat.mtrl-sci q-fin.* physics.comp-ph physics.ao-ph physics.chem-ph astro-ph.IM math.NA)",
    )
    parser.add_argument(
        "--max",
        type=_positive,
        default=None,
        metavar="N",
        help="read at most N entries this run (a saved cursor continues from there next time)",
    )
    parser.add_argument(
        "--queue",
        type=Path,
        default=None,
        metavar="FILE",
        help="the candidate queue (default: ./crawler/queue.yaml, else the checkout's)",
    )
    parser.add_argument(
        "--cursor",
        type=Path,
        default=None,
        metavar="FILE",
        help="where the crawl's position is saved (default: $RCB_CACHE_DIR/crawl/<query>.json, "
        "under ~/.cache/rcb)",
    )
    parser.add_argument(
        "--restart", action="store_true", help="ignore a saved cursor and start from the beginning"
    )
    parser.add_argument(
        "--issues",
        metavar="OWNER/REPO",
        default=None,
        help="also open a triage issue in this repository for each untriaged candidate "
        "(status: new) that has none, never two for a paper (token in GITHUB_TOKEN, API in "
        "GITHUB_API_URL)",
    )
    parser.add_argument(
        "--page-size",
        type=_positive,
        default=100,
        metavar="N",
        help="entries per arXiv request (default 100, at most 2000)",
    )
    parser.add_argument(
        "--delay",
        type=_seconds,
        default=3.0,
        metavar="SECONDS",
        help="pause between requests (default 3; arXiv's terms ask for at least 3)",
    )
    parser.add_argument(
        "--retries",
        type=_count,
        default=3,
        metavar="N",
        help="retries of a failed page (default 3)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    add_tasks_dir(parser)
    add_registry(parser)
    parser.set_defaults(handler=run)


def _since(args: argparse.Namespace, latest_cutoff: dt.date | None) -> dt.date:
    if args.since is not None:
        try:
            since = dt.date.fromisoformat(args.since)
        except ValueError:
            raise RcbError(f"--since: '{args.since}' is not a date like 2025-03-01") from None
        if since > dt.datetime.now(dt.UTC).date():
            raise RcbError(f"--since: {since} is in the future")
        return since
    if latest_cutoff is None:
        raise RcbError(
            "--after-cutoff: no model in the registry has a knowledge_cutoff; pass --since YYYY-MM-DD"
        )
    return latest_cutoff + dt.timedelta(days=1)


def _categories(values: list[str] | None) -> tuple[str, ...]:
    from crawler import DEFAULT_CATEGORIES
    from rcb_action.errors import RcbError

    if not values:
        return DEFAULT_CATEGORIES
    out: list[str] = []
    for value in values:
        for category in filter(None, (v.strip() for v in value.split(","))):
            if not _CATEGORY.match(category):
                raise RcbError(
                    f"--categories: '{category}' is not an arXiv category like cs.LG or q-bio.*"
                )
            out.append(category)
    return tuple(dict.fromkeys(out))


def _tracker(repo: str) -> IssueTracker:
    """The triage issues' tracker for ``repo``, with the token in ``GITHUB_TOKEN``, through
    ``GITHUB_API_URL`` (GitHub's API by default), as on an Actions runner."""
    from crawler import IssueTracker
    from rcb_action.github import GitHubContext, github_client

    context = GitHubContext.from_env()
    if not context.token:
        raise RcbError("--issues needs a GitHub token in GITHUB_TOKEN (issues: write)")
    return IssueTracker(repo, github_client(context))


def run(args: argparse.Namespace) -> int:
    import sys

    from crawler import CrawlOptions, Cutoffs, crawl, print_warning, resolve_queue_path
    from rcb_action.models import load_registry
    from rcb_action.tasks import resolve_tasks_dir

    registry = load_registry(args.registry)
    cutoffs = Cutoffs.of(registry.cutoff(name) for name in registry.names())
    since = _since(args, cutoffs.latest)
    categories = _categories(args.categories)
    # Connect before crawling, so a bad repository or a missing token costs no arXiv requests.
    tracker = _tracker(args.issues) if args.issues else None
    options = CrawlOptions(
        since=since,
        queue_path=resolve_queue_path(args.queue),
        categories=categories,
        tasks_dir=resolve_tasks_dir(args.tasks_dir),
        max_entries=args.max,
        cursor_path=args.cursor,
        restart=args.restart,
        page_size=args.page_size,
        delay_seconds=args.delay,
        num_retries=args.retries,
        progress=not args.quiet,
    )
    summary = crawl(options, cutoffs, on_warning=print_warning)
    queue = summary.queue
    assert queue is not None
    counts = summary.counts
    dropped = [
        f"{counts[key]} {label}"
        for key, label in (
            ("no_code", "without a code link"),
            ("already_task", "already in tasks/"),
            ("before_since", "before --since"),
            ("other_category", "outside --categories"),
            ("malformed", "malformed"),
            ("unparsed_page", "unparsable pages"),
        )
        if counts[key]
    ]
    resumed = f" (resumed at entry {summary.start_offset})" if summary.start_offset else ""
    print(
        f"rcb: crawl: read {summary.read} arXiv entries submitted since {since}{resumed}: "
        f"{counts['kept']} with code" + (f"; dropped {', '.join(dropped)}" if dropped else ""),
        file=sys.stderr,
    )
    for arxiv_id in summary.added:
        c = queue.candidates[arxiv_id]
        print(f"new      {c.arxiv}  score {c.score:>2}  {c.domain:<10} {c.title}")
    for arxiv_id in summary.updated:
        c = queue.candidates[arxiv_id]
        print(f"updated  {c.arxiv}  v{c.version}       {c.domain:<10} {c.title}")
    if summary.queue_written:
        print(
            f"rcb: {queue.path}: {len(summary.added)} new, {len(summary.updated)} updated, "
            f"{len(queue.candidates)} candidates in all",
            file=sys.stderr,
        )
    else:
        print(f"rcb: {queue.path}: unchanged", file=sys.stderr)
    if summary.complete:
        print("rcb: crawl complete", file=sys.stderr)
    else:
        print(
            f"rcb: stopped at entry {summary.offset}"
            + (f" of {summary.total}" if summary.total is not None else "")
            + f" (--max); run the same command again to continue (cursor {summary.cursor_path})",
            file=sys.stderr,
        )
    if tracker is not None:
        untriaged = [c for c in queue.sorted() if c.status == "new"]
        created = tracker.ensure(untriaged)
        for arxiv_id, number in created:
            print(f"issue    {arxiv_id}  #{number}")
        print(
            f"rcb: --issues {args.issues}: {len(created)} issue(s) opened, "
            f"{len(untriaged) - len(created)} candidate(s) already had one",
            file=sys.stderr,
        )
    return 0
