"""rcb reproduce: agents reproduce papers' experiments, graded stage by stage."""

from __future__ import annotations

import argparse
from pathlib import Path

from rcb_action.commands._common import add_registry, add_sandbox, add_tasks_dir

ORDER = 15
DEFAULT_MODELS = ["reference"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="score agents on the reproduction track",
        description="An agent gets a paper and a clean sandbox (no network; pip installs from a "
        "local wheelhouse) and must reproduce the paper's experiment through five stages: plan, "
        "env_setup, code_impl, train_debug, result_check. Each stage is checked on its own; a "
        "failed stage ends the attempt and is reported as its cause. Each task's gold "
        "reproduction runs first: a task whose gold run fails is invalid and no model is blamed "
        "for it. Records go to OUT/reproduction.jsonl and step logs to OUT/repro-logs/; rerunning "
        "the same command resumes.",
        epilog="Models: reference (the task's gold reproduction); the adversaries built from "
        "it, which every task must flag: baseline:fabricator (reproduce.sh writes the published "
        "numbers), baseline:never-calls (seeded noise around them, the method never called), "
        "baseline:constant (the seed hard-wired), baseline:copied (the published numbers "
        "written over the computed ones), baseline:split-liar (split hashes of its own); "
        "baseline:lazy (a plan and nothing else); replay:FILE.jsonl (scripted agent turns); or "
        "any litellm name with "
        "tool calling, e.g. openai/gpt-4o. With no "
        f"--model: {' and '.join(DEFAULT_MODELS)}. Without --judge, method accuracy and "
        "experiment design are not graded.",
    )
    parser.add_argument(
        "--model", action="append", default=[], metavar="M", help="agent model (repeatable)"
    )
    parser.add_argument(
        "--tasks",
        default=None,
        metavar="GLOB",
        help="only reproduction tasks whose id matches, e.g. 'repro-adopt*'",
    )
    parser.add_argument(
        "--samples", type=int, default=1, metavar="N", help="attempts per task (default 1)"
    )
    parser.add_argument(
        "--judge",
        default=None,
        metavar="M",
        help="litellm model that grades plans and code against each task's rubric",
    )
    add_sandbox(parser)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("results"),
        metavar="DIR",
        help="results folder (default results/)",
    )
    parser.add_argument(
        "--memory-mb", type=int, default=4096, metavar="MB", help="memory limit per command"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress lines")
    add_tasks_dir(parser)
    add_registry(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rcb_action.models import load_registry
    from rcb_action.report import print_reproduction
    from rcb_action.reproduce import (
        REPRODUCTION_FILE,
        ReproduceConfig,
        gold_summary,
        read_reproduction_records,
        reproduce,
        reproduction_section,
    )
    from rcb_action.sandbox import Limits

    config = ReproduceConfig(
        models=args.model or DEFAULT_MODELS,
        out=args.out,
        tasks_dir=args.tasks_dir,
        tasks=args.tasks,
        samples=args.samples,
        sandbox=args.sandbox,
        judge=args.judge,
        registry_files=args.registry,
        progress=not args.no_progress,
        limits=Limits(memory_mb=args.memory_mb),
    )
    summary = reproduce(config)
    records = [
        r
        for r in read_reproduction_records(args.out / REPRODUCTION_FILE)
        if r.model in summary.models
    ]
    registry = load_registry(args.registry)
    print_reproduction(reproduction_section(records, gold_summary(args.out), registry))
    return 1 if summary.invalid_tasks else 0
