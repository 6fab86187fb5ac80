"""rcb validate: check task folders."""

from __future__ import annotations

import argparse
from pathlib import Path

from rcb_action.commands._common import add_sandbox, add_tasks_dir

ORDER = 50


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check tasks: schema, tags, reference passes, null fails, timing, mutants",
        description="Check task folders (all of them by default). A snippet task must load, its "
        "reference must pass every snippet's tests, the null body must fail them, and its suite must "
        "run in 30 s; a reproduction task's gold reproduction must pass every stage (cached per task "
        "hash and sandbox). Problems print as file:line: message; the exit status is 1 when any "
        "task has a problem.",
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, metavar="TASK_DIR", help="task folders or a tasks folder"
    )
    parser.add_argument(
        "--mutants",
        action="store_true",
        help="also mutation-test each snippet's tests; writes tasks/<id>/mutants.json and needs every snippet to kill one (a snippet whose code, tests and task files are unchanged keeps its stored result); on a reproduction task, run the adversaries built from its reference (baseline:fabricator, never-calls, constant, copied, split-liar), each of which must fail with its own flag",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=10,
        metavar="N",
        help="run the reference of a task with cases and checks under RCB_SEED 0..N-1; "
        "every check must pass for each (default 10)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, metavar="N", help="mutant runs in parallel (default 1)"
    )
    parser.add_argument(
        "--annotations",
        action="store_true",
        help="also print problems as GitHub Actions annotations (::error file=...,line=...::)",
    )
    add_sandbox(parser)
    add_tasks_dir(parser)
    parser.set_defaults(handler=run)


def task_roots(paths: list[Path], tasks_dir: Path | None) -> list[Path]:
    """Task folders named directly, or found inside folders of tasks."""
    from rcb_action.errors import RcbError
    from rcb_action.tasks import find_tasks, resolve_tasks_dir

    if not paths:
        return find_tasks(resolve_tasks_dir(tasks_dir))
    roots: list[Path] = []
    for path in paths:
        if (path / "task.yaml").is_file():
            roots.append(path)
        elif path.is_dir():
            roots += find_tasks(path)
        else:
            raise RcbError(f"{path}: not a task folder (no task.yaml) nor a folder of tasks")
    return roots


def run(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.sandbox import get_backend
    from rcb_action.validate import validate_tasks

    if args.seeds < 1:
        raise RcbError("--seeds must be at least 1")
    roots = task_roots(args.paths, args.tasks_dir)
    backend = get_backend(args.sandbox)
    try:
        checks = validate_tasks(
            roots, backend, mutants=args.mutants, workers=args.workers, seeds=args.seeds
        )
    finally:
        backend.close()
    if args.annotations:
        from rcb_action.github import annotation

        for check in checks:
            for p in check.problems:
                print(annotation("error", p.message, file=p.path or None, line=p.line))
            for w in check.warnings:
                print(annotation("warning", w.message, file=w.path or None, line=w.line))
    bad = [c for c in checks if not c.ok]
    print(f"rcb: {len(checks) - len(bad)} of {len(checks)} task(s) valid")
    if args.mutants:
        killed = sum(m.killed for c in checks for m in c.mutants.values())
        total = sum(m.total for c in checks for m in c.mutants.values())
        if total:  # reproduction tasks have adversaries instead, reported per task
            print(f"rcb: mutants killed {killed} of {total} ({100 * killed / total:.1f}%)")
    return 1 if bad else 0
