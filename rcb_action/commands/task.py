"""rcb task new: scaffold a task folder from a candidate in the crawler's queue."""

from __future__ import annotations

import argparse
from pathlib import Path

from rcb_action.commands._common import add_tasks_dir

ORDER = 75


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "task",
        help="task folders: new ARXIV_ID (scaffold from the crawler queue), index (tasks/README.md)",
        description="Work on task folders.",
    )
    actions = parser.add_subparsers(dest="task_command", metavar="ACTION")
    new = actions.add_parser(
        "new",
        help="scaffold tasks/<id>/ from a queue entry",
        description="Scaffold tasks/<id>/ from the crawler queue's entry for ARXIV_ID: task.yaml "
        "filled from its metadata, a notes.md for maintainers' notes, and src/ and tests/ skeletons that fail "
        "validation until written. Prints the next steps.",
    )
    new.add_argument(
        "arxiv_id", metavar="ARXIV_ID", help="e.g. 2507.01234 (a version suffix is ignored)"
    )
    new.add_argument(
        "--id",
        dest="task_id",
        default=None,
        metavar="TASK_ID",
        help="the task folder's name (default: from the title's first words)",
    )
    new.add_argument(
        "--env",
        default=None,
        metavar="ENV",
        help="shared environment under tasks/_envs (default: numpy)",
    )
    new.add_argument(
        "--queue",
        type=Path,
        default=None,
        metavar="FILE",
        help="the candidate queue (default: ./crawler/queue.yaml, else the checkout's)",
    )
    add_tasks_dir(new)
    new.set_defaults(handler=run_new)
    index = actions.add_parser(
        "index",
        help="write tasks/README.md, the benchmark's index (or --check it is current)",
        description="Generate tasks/README.md from the task folders: every task with its paper, "
        "date, domain, snippets, weighted lines and mutant kill rate, and the totals.",
    )
    index.add_argument(
        "--check", action="store_true", help="exit 1 if tasks/README.md is not current"
    )
    add_tasks_dir(index)
    index.set_defaults(handler=run_index)
    parser.set_defaults(handler=lambda args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def run_new(args: argparse.Namespace) -> int:
    from crawler import load_queue, parse_arxiv_id, resolve_queue_path, scaffold_task
    from rcb_action.errors import RcbError
    from rcb_action.tasks import resolve_tasks_dir

    parsed = parse_arxiv_id(args.arxiv_id)
    if parsed is None:
        raise RcbError(f"ARXIV_ID: '{args.arxiv_id}' is not an arXiv id like 2507.01234")
    arxiv_id = parsed[0]
    queue = load_queue(resolve_queue_path(args.queue))
    candidate = queue.candidates.get(arxiv_id)
    if candidate is None:
        raise RcbError(
            f"{queue.path}: no candidate {arxiv_id} (run rcb crawl, or pass --queue FILE)"
        )
    tasks_dir = resolve_tasks_dir(args.tasks_dir)
    made = scaffold_task(candidate, tasks_dir, task_id=args.task_id, env=args.env)
    where = made.root
    status = f" (its queue status is '{candidate.status}')" if candidate.status != "new" else ""
    print(f"Created {where}/ from arXiv {arxiv_id}, score {candidate.score}{status}:")
    for rel in made.files:
        print(f"  {where / rel}")
    print(
        "\nNext steps:\n"
        f"  1. Check 'arxiv_version' in {where / 'task.yaml'} and read the paper: rcb paper show {made.root.name}\n"
        f"  2. Put the paper's method in {where / 'src' / (made.module + '.py')} and mark each part a\n"
        "     model should write with paper2code tags (replace the NotImplementedError skeleton).\n"
        f"  3. Write tests in {where / 'tests'} against values derived independently of the code\n"
        "     (closed forms, invariants, small cases by hand); remove the pytest.fail placeholder.\n"
        f"  4. In {where / 'task.yaml'}, name each snippet's tests under snippets:, and pick env:.\n"
        f"  5. rcb validate {where} --mutants   (reference passes, null fails, mutants killed)\n"
        f'  6. rcb prompt {where.name} "<snippet>"   (read what the model will see)\n'
        f"  7. Open a pull request with {where}/; the next crawl marks the queue entry status: task."
    )
    return 0


def run_index(args: argparse.Namespace) -> int:
    import sys

    from rcb_action.tasks import resolve_tasks_dir
    from rcb_action.validate._index import INDEX_FILE, render_index

    tasks_dir = resolve_tasks_dir(args.tasks_dir)
    path = tasks_dir / INDEX_FILE
    text = render_index(tasks_dir)
    if args.check:
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            print(
                f"rcb: {path} is out of date; run `rcb task index` and commit it", file=sys.stderr
            )
            return 1
        print(f"rcb: {path} is current", file=sys.stderr)
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"rcb: wrote {path}", file=sys.stderr)
    return 0
