"""rcb evaluate: score models on the snippet track."""

from __future__ import annotations

import argparse
from pathlib import Path

from rcb_action.commands._common import add_registry, add_sandbox, add_tasks_dir

ORDER = 10
DEFAULT_MODELS = ["reference", "null"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="score models on the snippet track",
        description="Mask each snippet in turn, ask each model to write it from the paper and the code, "
        "splice the answer back and run the snippet's tests in a sandbox. Results are appended to "
        "OUT/results.jsonl as they finish; rerunning the same command resumes and skips finished work.",
        epilog="Models: reference (the true code), null (an empty body), replay:FILE.jsonl (completions "
        "made elsewhere), or any litellm name such as openai/gpt-4o (its key from the usual environment "
        f"variable). With no --model: {' and '.join(DEFAULT_MODELS)}.",
    )
    parser.add_argument(
        "--model", action="append", default=[], metavar="M", help="model to score (repeatable)"
    )
    parser.add_argument(
        "--tasks",
        default=None,
        metavar="GLOB",
        help="only tasks whose id matches, e.g. 'dyt' or 'ad*'; several: 'dyt,ad*'",
    )
    parser.add_argument(
        "--samples", type=int, default=1, metavar="N", help="samples per snippet (default 1)"
    )
    paper = parser.add_mutually_exclusive_group()
    paper.add_argument(
        "--paper",
        choices=["with", "without", "both", "notes"],
        default="with",
        help="give the paper (its own LaTeX, pinned and cached), not, both (the ablation), or "
        "notes: the task's notes.md instead of the paper, reported apart, never a headline",
    )
    paper.add_argument(
        "--no-paper",
        dest="paper",
        action="store_const",
        const="without",
        help="same as --paper without",
    )
    parser.add_argument(
        "--workers", type=int, default=None, metavar="N",
        help="test runs in flight at once (default: the CPU count, at most 8)",
    )  # fmt: skip
    parser.add_argument(
        "--concurrency", type=int, default=None, metavar="N",
        help="model calls in flight at once per model (default 16; a model's 'concurrency' in "
        "the registry wins); halves on a rate limit and grows back",
    )  # fmt: skip
    parser.add_argument(
        "--dry-run", action="store_true",
        help="print per model the attempts, calls, estimated tokens and dollars, then exit "
        "(nothing is called or run)",
    )  # fmt: skip
    parser.add_argument(
        "--batch", action="store_true",
        help="send each provider model's prompts through its batch API (openai/ models; half "
        "the price, answers within 24 h); the batch id is recorded in OUT/batches/, so an "
        "interrupted run picks the same batch up again",
    )  # fmt: skip
    parser.add_argument(
        "--batch-poll", type=float, default=30.0, metavar="S",
        help="with --batch: seconds between looks at a batch in progress (default 30)",
    )  # fmt: skip
    parser.add_argument(
        "--max-cost", type=float, default=None, metavar="USD",
        help="start no new model call once the dollars recorded for these models in OUT reach "
        "USD; what is in flight finishes, and a rerun with a higher cap resumes",
    )  # fmt: skip
    add_sandbox(parser)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("results"),
        metavar="DIR",
        help="results folder (default results/)",
    )
    parser.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help="run only shard I of N (1-based); merge with rcb merge",
    )
    parser.add_argument(
        "--fail-under", type=float, default=None, metavar="X",
        help="exit 1 if any model's scaled pass@1 is below X (percent)",
    )  # fmt: skip
    parser.add_argument(
        "--agent-turns",
        type=int,
        default=0,
        metavar="K",
        help="agent mode: after its first answer the model sees the task's visible checks "
        "(task.yaml 'agent') run on its code and may rewrite it up to K times; the hidden "
        "checks decide, and never run where the model's code or its feedback can see them. "
        "Tasks with in-process tests give no feedback. Records both pass@1 and pass-after-K "
        "(default 0: off)",
    )
    parser.add_argument(
        "--memory-mb", type=int, default=4096, metavar="MB", help="memory limit per test run"
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress bar or progress lines"
    )
    add_tasks_dir(parser)
    add_registry(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rcb_action.runner import (
        DEFAULT_CONCURRENCY,
        EvalConfig,
        default_workers,
        finish_evaluation,
        parse_shard,
        run_evaluation,
    )
    from rcb_action.sandbox import Limits

    config = EvalConfig(
        models=args.model or DEFAULT_MODELS,
        out=args.out,
        tasks_dir=args.tasks_dir,
        tasks=args.tasks,
        samples=args.samples,
        paper=args.paper,
        workers=args.workers if args.workers is not None else default_workers(),
        sandbox=args.sandbox,
        shard=parse_shard(args.shard) if args.shard else None,
        registry_files=args.registry,
        progress=not args.no_progress,
        limits=Limits(memory_mb=args.memory_mb),
        agent_turns=args.agent_turns,
        concurrency=args.concurrency if args.concurrency is not None else DEFAULT_CONCURRENCY,
        max_cost_usd=args.max_cost,
        batch=args.batch,
        batch_poll_s=args.batch_poll,
    )
    if args.dry_run:
        from rcb_action.runner import estimate, format_estimates

        print(format_estimates(estimate(config), config))
        return 0
    return finish_evaluation(run_evaluation(config), fail_under=args.fail_under)
