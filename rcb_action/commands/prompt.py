"""rcb prompt: print the exact prompt a model sees for one snippet."""

from __future__ import annotations

import argparse
import sys

from rcb_action.commands._common import add_tasks_dir

ORDER = 30


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prompt",
        help="print the exact prompt for one snippet",
        description="Print the prompt bytes a model is sent for TASK_ID's snippet SNIPPET_NAME; "
        "its prompt_sha goes to stderr. Tests are never part of it.",
    )
    parser.add_argument("task_id", metavar="TASK_ID")
    parser.add_argument("snippet", metavar="SNIPPET_NAME")
    paper = parser.add_mutually_exclusive_group()
    paper.add_argument(
        "--paper",
        choices=["with", "without", "notes"],
        default="with",
        help="with the paper (fetched once and cached if need be), without it, or with the "
        "task's notes.md instead",
    )
    paper.add_argument(
        "--no-paper", dest="paper", action="store_const", const="without",
        help="same as --paper without",
    )  # fmt: skip
    parser.add_argument(
        "--context-window",
        type=int,
        default=None,
        metavar="TOKENS",
        help="cut the paper to fit this window",
    )
    add_tasks_dir(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.prompts import build_prompt
    from rcb_action.tasks import load_task, resolve_tasks_dir

    root = resolve_tasks_dir(args.tasks_dir) / args.task_id
    if not (root / "task.yaml").is_file():
        raise RcbError(f"{root}: no such task (see the folders under {root.parent})")
    task = load_task(root)
    if args.snippet not in task.snippets:
        names = ", ".join(f'"{n}"' for n in task.snippet_names())
        raise RcbError(f'task {task.id} has no snippet "{args.snippet}"; its snippets: {names}')
    prompt = build_prompt(task, args.snippet, paper=args.paper, context_window=args.context_window)
    sys.stdout.write(prompt.text)
    note = (
        f", paper cut to {prompt.paper_chars_kept} of {prompt.paper_chars} chars"
        if prompt.paper_truncated
        else ""
    )
    paper = f", paper_sha {prompt.paper_sha}" if prompt.paper_sha else ""
    print(f"prompt_sha {prompt.sha} ({len(prompt.text)} chars{note}{paper})", file=sys.stderr)
    return 0
