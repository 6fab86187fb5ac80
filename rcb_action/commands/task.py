"""rcb task new: lay out a task folder from the authors' code and the crawler's queue;
rcb task index: the benchmark's index, tasks/README.md."""

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
        help="lay out tasks/<id>/ from the authors' code at a commit (and the queue entry)",
        description="Lay out tasks/<id>/ for arXiv paper ARXIV_ID. With --code URL@COMMIT "
        "--from PATH, from the authors' repository read at that commit from a local copy "
        "(a working tree or a bare git directory; nothing is fetched): its licence file is "
        "copied (MIT, Apache-2.0, BSD-2-Clause or BSD-3-Clause, else refused), the files "
        "--files names are copied into src/, and task.yaml pins code_url, the full "
        "code_commit, code_license and arxiv_version. Title, date and domain come from the "
        "crawler queue's entry when there is one, else placeholders rcb validate rejects "
        "until filled. Without --code, the queue entry is needed and src/ gets a skeleton. "
        "cases/ and checks/ skeletons fail until written; notes.md holds a checklist. "
        "Prints the next steps.",
    )
    new.add_argument(
        "arxiv_id", metavar="ARXIV_ID", help="e.g. 2507.01234 (a version suffix is ignored)"
    )
    new.add_argument(
        "--code",
        default=None,
        metavar="URL@COMMIT",
        help="the authors' repository and the commit to build from (a sha or its prefix)",
    )
    new.add_argument(
        "--from",
        dest="source",
        type=Path,
        default=None,
        metavar="PATH",
        help="a local copy of that repository holding the commit: a working tree or a bare "
        "git directory (git clone URL PATH)",
    )
    new.add_argument(
        "--files",
        nargs="+",
        default=None,
        metavar="PATH",
        help="files (or folders) of the repository to copy into src/, as at the commit",
    )
    new.add_argument(
        "--id",
        dest="task_id",
        default=None,
        metavar="TASK_ID",
        help="the task folder's name (default: from the title's first words, else the "
        "repository's name)",
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
    from crawler import (
        load_queue,
        open_code,
        parse_arxiv_id,
        resolve_queue_path,
        scaffold_task,
    )
    from rcb_action.errors import RcbError
    from rcb_action.tasks import resolve_tasks_dir

    parsed = parse_arxiv_id(args.arxiv_id)
    if parsed is None:
        raise RcbError(f"ARXIV_ID: '{args.arxiv_id}' is not an arXiv id like 2507.01234")
    arxiv_id = parsed[0]
    if args.code is None and (args.source is not None or args.files):
        raise RcbError("--from and --files read the authors' code: give --code URL@COMMIT too")
    if args.code is not None and args.source is None:
        raise RcbError(
            "--code needs --from PATH: a local clone of the repository holding the commit "
            "(rcb task new fetches nothing)"
        )
    queue = load_queue(resolve_queue_path(args.queue))
    candidate = queue.candidates.get(arxiv_id)
    if candidate is None and args.code is None:
        raise RcbError(
            f"{queue.path}: no candidate {arxiv_id} (run rcb crawl, pass --queue FILE, or lay "
            "the task out from the authors' code with --code URL@COMMIT --from PATH)"
        )
    code = open_code(args.code, args.source) if args.code is not None else None
    tasks_dir = resolve_tasks_dir(args.tasks_dir)
    made = scaffold_task(
        candidate,
        tasks_dir,
        arxiv_id=arxiv_id,
        task_id=args.task_id,
        env=args.env,
        code=code,
        files=args.files,
    )
    where = made.root
    task_yaml = where / "task.yaml"
    if candidate is None:
        origin = f"arXiv {arxiv_id} (no queue entry)"
    else:
        status = f", queue status '{candidate.status}'" if candidate.status != "new" else ""
        origin = f"arXiv {arxiv_id} (queue score {candidate.score}{status})"
    if made.code is not None:
        origin += f", {made.code.url} at {made.code.commit} ({made.license})"
    print(f"Created {where}/ for {origin}:")
    for rel in made.files:
        print(f"  {where / rel}")
    steps: list[str] = []
    if made.placeholders:
        steps.append(
            f"Fill in {', '.join(made.placeholders)} in {task_yaml} from the paper's arXiv "
            "page (v1 title and date; domain from the primary category)."
        )
    steps.append(
        f"Check 'arxiv_version' in {task_yaml} and read the paper: rcb paper show {where.name}"
    )
    if made.code is not None:
        if not made.sources:
            steps.append(
                f"Copy the files the cases need into {where / 'src'}: git "
                f"{' '.join(made.code.git[1:])} show {made.code.short}:PATH > "
                f"{where / 'src'}/PATH, and list them under 'annotated:' or 'context:'."
            )
        steps.append(
            "Trim src/ to what the cases need, keeping the authors' framework and style, and "
            "mark what the paper contributes with paper2code tags (mean at least 6 lines a "
            "snippet, at most 25% of one- or two-line snippets)."
        )
    else:
        steps.append(
            f"Put the paper's method in {where / 'src' / (made.module + '.py')} (better: the "
            "authors' code, with --code) and mark each part a model should write with "
            "paper2code tags."
        )
    steps += [
        f"Write the cases in {where / 'cases'} (seeded from RCB_SEED) and the checks in "
        f"{where / 'checks'} (stated tolerances, the paper's closed forms); remove the "
        "placeholders that fail.",
        f"In {task_yaml}, name each snippet's checks under snippets:, and pick env:.",
        f"Work through the checklist in {where / 'notes.md'}.",
        f"rcb validate {where} --mutants   (reference passes, null fails, nothing given "
        "away, mutants killed)",
        f'rcb prompt {where.name} "<snippet>"   (read what the model will see)',
        f"Open a pull request with {where}/; the next crawl marks the queue entry status: task.",
    ]
    print("\nNext steps:")
    for number, step in enumerate(steps, 1):
        print(f"  {number}. {step}")
    return 0


def run_index(args: argparse.Namespace) -> int:
    import sys

    from rcb_action.tasks import resolve_tasks_dir
    from rcb_action.validate import INDEX_FILE, render_index

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
