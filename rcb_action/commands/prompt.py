"""rcb prompt: print the exact prompt a model sees for one snippet, or export them all."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rcb_action.commands._common import add_tasks_dir

ORDER = 30


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "prompt",
        help="print the exact prompt for one snippet, or export every prompt",
        description="Print the prompt bytes a model is sent for TASK_ID's snippet SNIPPET_NAME; "
        "its prompt_sha goes to stderr. Tests are never part of it. With --all --out FILE, "
        "write every prompt of the selection as JSON lines instead, to run a model elsewhere "
        "(your own hardware, a provider's batch tool) and score its answers with "
        "--model replay:FILE.",
        epilog="Each exported line is {task, snippet, sample, paper, prompt_sha, prompt}. Add a "
        '"completion" to each line and it is a replay file: rcb evaluate --model replay:FILE '
        "--paper P scores it, and refuses a line whose prompt_sha is not the current prompt "
        "(the task or paper changed since the export).",
    )
    parser.add_argument("task_id", metavar="TASK_ID", nargs="?")
    parser.add_argument("snippet", metavar="SNIPPET_NAME", nargs="?")
    parser.add_argument(
        "--all", action="store_true", help="every snippet of the selected tasks (needs --out)"
    )
    parser.add_argument(
        "--out", type=Path, default=None, metavar="FILE", help="with --all: the JSONL file to write"
    )
    parser.add_argument(
        "--tasks", default=None, metavar="GLOB", help="with --all: only tasks whose id matches"
    )
    parser.add_argument(
        "--samples", type=int, default=1, metavar="N",
        help="with --all: lines per snippet, sample 0..N-1 (default 1)",
    )  # fmt: skip
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


def export(args: argparse.Namespace) -> int:
    """``--all``: every prompt of the selection, one JSON line each, written whole or not at all."""
    from rcb_action.errors import RcbError
    from rcb_action.papers import notes_for, paper_for
    from rcb_action.paths import write_atomic
    from rcb_action.prompts import build_prompt
    from rcb_action.tasks import load_tasks_of_kind, resolve_tasks_dir

    if args.task_id or args.snippet:
        raise RcbError("rcb prompt --all: give no TASK_ID or SNIPPET_NAME (select with --tasks)")
    if args.out is None:
        raise RcbError("rcb prompt --all: give --out FILE (a JSONL file to write)")
    if args.samples < 1:
        raise RcbError("--samples must be at least 1")
    tasks = load_tasks_of_kind(resolve_tasks_dir(args.tasks_dir), args.tasks, "snippet")
    lines = []
    for task in tasks:
        text = {"with": paper_for, "notes": notes_for}.get(args.paper, lambda _: None)(task)
        for snippet in task.snippet_names():
            prompt = build_prompt(
                task,
                snippet,
                paper=args.paper,
                context_window=args.context_window,
                text=text,
            )
            for sample in range(args.samples):
                row = {
                    "task": task.id,
                    "snippet": snippet,
                    "sample": sample,
                    "paper": args.paper,
                    "prompt_sha": prompt.sha,
                    "prompt": prompt.text,
                }
                lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    out: Path = args.out
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(out, "".join(lines).encode("utf-8"))
    except OSError as exc:
        raise RcbError(f"--out {out}: cannot be written ({exc.strerror})") from None
    print(
        f"rcb: {len(lines)} prompt(s) of {len(tasks)} task(s), paper {args.paper}, written to {out}",
        file=sys.stderr,
    )
    return 0


def run(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.prompts import build_prompt
    from rcb_action.tasks import load_task, resolve_tasks_dir

    if args.all:
        return export(args)
    if not args.task_id or not args.snippet:
        raise RcbError("rcb prompt: give TASK_ID and SNIPPET_NAME, or --all --out FILE")

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
