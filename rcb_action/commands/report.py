"""rcb report: scores, intervals, per-task tables and failure classes from a results folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rcb_action.commands._common import add_registry

ORDER = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "report",
        help="print (and write) the report of a results folder",
        description="Scaled pass@1 with a 95%% bootstrap CI, the unweighted pass rate, per-task scores, "
        "failure classes and the post-cutoff subset, for every model in the results; tasks graded "
        "by in-process tests are labelled forgeable, and a cutoff only a submission's model.yaml "
        "gives is shown as declared by the submitter; and, when "
        "the folder holds reproduction.jsonl, the reproduction track's five failure rates per "
        "model, its stage funnel and each model's plan score beside its execution success.",
    )
    parser.add_argument(
        "dirs",
        nargs="*",
        type=Path,
        metavar="DIR",
        help="results folder(s) of rcb evaluate or rcb reproduce",
    )
    parser.add_argument(
        "--json", type=Path, default=None, metavar="FILE", help="write the report as JSON"
    )
    parser.add_argument(
        "--markdown", type=Path, default=None, metavar="FILE", help="write the report as Markdown"
    )
    parser.add_argument(
        "--model", action="append", default=[], metavar="M", help="only these models (repeatable)"
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing; only write the files")
    parser.add_argument(
        "--schema",
        action="store_true",
        help="print the JSON Schema of report.json (docs/report.schema.json) and exit",
    )
    add_registry(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.models import load_registry
    from rcb_action.report import (
        ReproductionSection,
        build_report,
        print_report,
        print_reproduction,
        render_markdown,
    )
    from rcb_action.reproduce import (
        GOLD_FILE,
        REPRODUCTION_FILE,
        gold_summary,
        read_reproduction_records,
        reproduction_section,
    )
    from rcb_action.results import RESULTS_FILE, read_records

    if args.schema:
        from rcb_action.report import report_schema

        sys.stdout.write(report_schema())
        return 0
    if not args.dirs:
        raise RcbError("rcb report: give a results folder (DIR), or --schema")
    records = []
    attempts = []
    gold: dict[str, dict[str, object]] = {}
    for directory in args.dirs:
        path = directory / RESULTS_FILE
        repro = directory / REPRODUCTION_FILE
        if not any(p.is_file() for p in (path, repro, directory / GOLD_FILE)):
            raise RcbError(
                f"{directory}: no {RESULTS_FILE} here, nor {REPRODUCTION_FILE} "
                "(give the --out folder of rcb evaluate or rcb reproduce)"
            )
        records += read_records(path)
        attempts += read_reproduction_records(repro)
        gold.update(gold_summary(directory))
    if args.model:
        records = [r for r in records if r.model in args.model]
        attempts = [r for r in attempts if r.model in args.model]
    registry = load_registry(args.registry)
    report = build_report(records, registry, source=", ".join(map(str, args.dirs)))
    if attempts or gold:
        section = ReproductionSection.model_validate(reproduction_section(attempts, gold, registry))
        report = report.model_copy(update={"reproduction": section})
    if not args.quiet:
        if records or not attempts:
            print_report(report)
        if report.reproduction is not None:
            print_reproduction(report.reproduction)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(report.to_json(), encoding="utf-8")
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(render_markdown(report), encoding="utf-8")
    return 0
