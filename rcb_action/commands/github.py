"""rcb gh: the GitHub side (what action.yml and the workflows run).

Every sub-command reads the runner's environment (``GITHUB_OUTPUT``,
``GITHUB_STEP_SUMMARY``, ``GITHUB_EVENT_PATH``, ``GITHUB_API_URL``,
``GITHUB_TOKEN``) and also runs off Actions, where outputs print as ``name=value``.
Action inputs reach these commands as arguments expanded from environment
variables, never as template text inside shell code.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rcb_action.commands._common import add_tasks_dir

if TYPE_CHECKING:
    from rcb_action.github import Comparison, Submission
    from rcb_action.report import Report

ORDER = 80


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "gh",
        help="GitHub Actions glue: evaluate step, summary, PR comment, matrix, verdict",
        description="The steps of rcb's GitHub Action and workflows. Off Actions, outputs print as "
        "name=value lines and nothing is written to a job summary.",
    )
    sub = parser.add_subparsers(dest="gh_command", metavar="STEP")
    parser.set_defaults(handler=lambda args: _help(parser))

    p = sub.add_parser(
        "evaluate",
        help="the Action's evaluate step: rcb evaluate from the inputs, then the report",
        description="Run rcb evaluate with the Action's inputs (empty means the default), write "
        "report.json and report.md into the results folder and set the outputs scaled-pass-rate "
        "(the first model's), results-path and report-path. Exit codes as rcb evaluate's.",
    )
    _selection_arguments(p)
    p.add_argument("--sandbox", default="local")
    p.add_argument("--fail-under", default="")
    p.add_argument("--results-dir", default="rcb-results")
    p.add_argument("--workers", default="")
    p.add_argument("--concurrency", default="")
    p.add_argument("--max-cost", default="")
    p.add_argument("--mode", default="evaluate", help="evaluate, or merge: join --shards")
    p.add_argument("--comment", default="true", help="false on a shard leg: no fail-under")
    p.add_argument(
        "--shards", type=Path, default=None, metavar="DIR", help="with --mode merge: the shards"
    )
    p.set_defaults(handler=run_evaluate)

    p = sub.add_parser(
        "cache-key",
        help="the cache key prefix of the Action's results folder for these inputs",
        description="Set the output 'prefix': rcb-results-<run>-<tasks>-, a hash of the rcb "
        "version, the models (a replay file by its content), the registry files, samples, paper "
        "and shard, then of each selected task's hash; and 'key', the prefix with this run's id "
        "(GITHUB_RUN_ID, GITHUB_RUN_ATTEMPT). A run restores the newest results saved under its "
        "prefix, so an unchanged evaluation makes no model call. Never fails the job: a problem "
        "is a warning and no output (the evaluate step reports it).",
    )
    _selection_arguments(p)
    p.set_defaults(handler=run_cache_key)

    p = sub.add_parser(
        "inputs",
        help="check the Action's mode, comment, shard, pr-number and run-id inputs",
        description="Check the inputs that decide what the Action's run does, before anything "
        "is scored, and set the outputs mode (evaluate or merge), comment and gate (true or "
        "false: a shard leg with comment false neither comments nor applies fail-under or "
        "fail-on-regression), pr-number, run-id and shards-dir (where mode merge downloads the "
        "shards' artifacts). A bad input is one line naming it (exit 2).",
    )
    p.add_argument("--mode", default="evaluate")
    p.add_argument("--comment", default="true")
    p.add_argument("--shard", default="")
    p.add_argument("--pr-number", default="")
    p.add_argument("--run-id", default="")
    p.set_defaults(handler=run_inputs)

    p = sub.add_parser(
        "baseline",
        help="find the base branch's report (a file, or the newest artifact on that branch)",
        description="On a pull request, fetch the newest report artifact made by this repository "
        "on the base branch; or read --path. Writes it to --out and sets the output 'path' "
        "(empty when there is none). Never fails the job: problems are warnings.",
    )
    p.add_argument("--path", default="", help="a report JSON or results folder to use instead")
    p.add_argument("--artifact", default="", help="artifact name (default rcb-report)")
    p.add_argument("--branch", default="", help="default: the pull request's base branch")
    p.add_argument("--pr", type=int, default=None, help="the pull request (default: the event's)")
    p.add_argument("--out", type=Path, required=True, metavar="FILE")
    p.set_defaults(handler=run_baseline)

    p = sub.add_parser(
        "gate",
        help="fail when a model's score fell from the base's beyond --fail-on-regression points",
        description="Compare the report with the base branch's on the snippets of tasks identical "
        "in both (a paired bootstrap over those snippets) and exit 1 when, for some model, the "
        "whole 95%% interval of the change lies below -POINTS. Without a base report, or with "
        "no POINTS, it says so and exits 0.",
    )
    p.add_argument("--report", type=Path, required=True, help="report JSON or results folder")
    p.add_argument("--baseline", default="", help="base branch's report JSON or results folder")
    p.add_argument(
        "--fail-on-regression", default="", metavar="POINTS", help="points of scaled pass@1"
    )
    p.set_defaults(handler=run_gate)

    p = sub.add_parser("summary", help="append the report (and comparison) to the job summary")
    p.add_argument("--report", type=Path, required=True, help="report JSON or results folder")
    p.add_argument("--baseline", default="", help="base branch's report JSON or results folder")
    p.add_argument("--note", action="append", default=[], help="a note to show (repeatable)")
    p.add_argument("--title", default="rcb")
    p.set_defaults(handler=run_summary)

    p = sub.add_parser(
        "comment",
        help="create or update the pull request's rcb comment (hidden marker)",
        description="Post the report (or --body-file, or a validation --verdict-file rendered "
        "here) as one comment on the pull request, edited in place by later runs with the same "
        "--key; only a comment written by the token's own user (--author) is ever edited. Off a "
        "pull request it does nothing. API failures are warnings unless --strict.",
    )
    body = p.add_mutually_exclusive_group(required=True)
    body.add_argument("--report", type=Path, help="report JSON or results folder")
    body.add_argument("--body-file", type=Path, help="a ready Markdown body")
    p.add_argument("--baseline", default="", help="base branch's report JSON or results folder")
    body.add_argument(
        "--verdict-file",
        type=Path,
        help="verdict.json of a validation run (untrusted: schema-checked, rendered here)",
    )
    p.add_argument("--key", default="", help="which comment (default: from workflow, job, models)")
    p.add_argument("--shard", default="", help="part of the default key")
    p.add_argument("--enabled", default="true", help="true or false (the Action's comment input)")
    p.add_argument(
        "--pr", type=int, default=None, help="pull request number (default: the event's)"
    )
    p.add_argument(
        "--head-sha",
        default="",
        help="post only if the pull request's head is this commit (the one the trusted event "
        "names); required with --verdict-file",
    )
    p.add_argument(
        "--run-url", default="", help="with --verdict-file: the validation run's page (trusted)"
    )
    p.add_argument(
        "--author",
        default="",
        help="whose comment to edit (default: the token's user; github-actions[bot] for an "
        "Actions token)",
    )
    p.add_argument("--note", action="append", default=[])
    p.add_argument("--title", default="rcb")
    p.add_argument("--strict", action="store_true", help="fail (exit 2) when the API refuses")
    p.set_defaults(handler=run_comment)

    p = sub.add_parser(
        "plan",
        help="the evaluation matrix: models x shards, GPU legs, submissions",
        description="Write the outputs matrix (JSON for strategy.matrix), legs (the count) and notes "
        "(e.g. GPU tasks skipped because no GPU runner is configured).",
    )
    p.add_argument("--models", default="", help="models, separated by commas or newlines")
    p.add_argument("--submissions", default="submissions", help="submissions folder ('' for none)")
    p.add_argument("--shards", default="1")
    p.add_argument("--tasks", default="", help="task id globs, separated by commas")
    p.add_argument("--runner", default="ubuntu-latest", help="runner label(s) of CPU legs")
    p.add_argument("--gpu-runner", default="", help="runner label(s) of GPU legs; empty: none")
    add_tasks_dir(p)
    p.set_defaults(handler=run_plan)

    p = sub.add_parser(
        "changed",
        help="task and submission folders a pull request changed",
        description="Outputs tasks (folders, space-separated), submissions (folders), models "
        "(replay: specs of the changed submissions) and registries (their model.yaml files).",
    )
    p.add_argument("--base", required=True, help="the base commit")
    p.add_argument("--head", default="HEAD")
    p.set_defaults(handler=run_changed)

    p = sub.add_parser("submissions", help="check model submission folders")
    p.add_argument("dirs", nargs="*", type=Path, metavar="DIR", help="default: every submission")
    p.add_argument("--root", type=Path, default=Path("submissions"), help="submissions folder")
    add_tasks_dir(p)
    p.set_defaults(handler=run_submissions)

    p = sub.add_parser(
        "verdict",
        help="write the validation verdict (verdict.json, data only) for the trusted commenter",
        description="Write verdict.json: per changed task and submission folder a status "
        "(passed, failed, not validated) and its problems as plain strings. A task that requires "
        "a GPU on a runner without one is not validated. Sets the output status (passed, failed "
        "or not-validated) and writes the rendered verdict to the job summary.",
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR")
    p.add_argument("--pr", type=int, required=True)
    p.add_argument("--head-sha", required=True)
    p.add_argument("--tasks", default="", help="validated task folders")
    p.add_argument("--validate-status", default="", help="rcb validate's exit code ('' not run)")
    p.add_argument("--validate-log", type=Path, default=None)
    p.add_argument("--submissions", default="", help="scored submission folders")
    p.add_argument("--submissions-status", default="")
    p.add_argument("--submissions-report", default="", help="their report JSON")
    p.add_argument("--submissions-log", type=Path, default=None)
    p.set_defaults(handler=run_verdict)
    p.add_argument(
        "--runner-gpu",
        default="",
        help="true or false: whether this runner has a GPU (default: look for /dev/nvidia*)",
    )


def _selection_arguments(parser: argparse.ArgumentParser) -> None:
    """What to score, as the Action's inputs give it: the same options (and defaults) for
    the evaluate step and for the cache key of its results."""
    parser.add_argument(
        "--models", default="reference", help="models, separated by commas or newlines"
    )
    parser.add_argument("--tasks", default="", help="task id globs, separated by commas")
    parser.add_argument("--samples", default="1")
    parser.add_argument("--paper", default="with", help="with, without, both or notes")
    parser.add_argument("--shard", default="", help="I/N")
    parser.add_argument("--tasks-dir", default="", help="default: rcb's own tasks")
    parser.add_argument("--registry", default="", help="extra models registry files")


def _help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _bool(name: str, value: str) -> bool:
    from rcb_action.errors import RcbError

    lowered = value.strip().lower()
    if lowered in ("true", "yes", "1", "on", ""):
        return True
    if lowered in ("false", "no", "0", "off"):
        return False
    raise RcbError(f"--{name} {value!r}: write true or false")


def _warn(message: str) -> None:
    from rcb_action.github import annotation

    print(annotation("warning", message, title="rcb"))


def run_inputs(args: argparse.Namespace) -> int:
    import tempfile

    from rcb_action.errors import RcbError
    from rcb_action.github import ActionInputs, action_plan, error_annotation, set_outputs

    try:
        plan = action_plan(
            ActionInputs(
                mode=args.mode,
                comment=args.comment,
                shard=args.shard,
                pr_number=args.pr_number,
                run_id=args.run_id,
            )
        )
    except RcbError as exc:
        print(f"rcb: error: {exc}", file=sys.stderr)
        print(error_annotation(str(exc)))
        return 2
    temp = os.environ.get("RUNNER_TEMP") or tempfile.gettempdir()
    set_outputs(
        {
            "mode": plan.mode,
            "comment": str(plan.comment).lower(),
            "gate": str(plan.gate).lower(),
            "pr-number": str(plan.pull or ""),
            "run-id": str(plan.run_id or ""),
            "shards-dir": str(Path(temp) / "rcb-shards"),
        }
    )
    return 0


def run_cache_key(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.github import ActionInputs, results_cache_key, set_outputs

    inputs = ActionInputs(
        models=args.models,
        tasks=args.tasks,
        samples=args.samples,
        paper=args.paper,
        shard=args.shard,
        tasks_dir=args.tasks_dir,
        registry=args.registry,
    )
    try:
        prefix = results_cache_key(inputs)
    except RcbError as exc:
        _warn(f"the results are not cached: {exc}")
        return 0
    run = f"{os.environ.get('GITHUB_RUN_ID', 'local')}-{os.environ.get('GITHUB_RUN_ATTEMPT', '1')}"
    set_outputs({"prefix": prefix, "key": prefix + run})
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from rcb_action.github import ActionInputs, headline_score, run_evaluate, set_outputs

    outcome = run_evaluate(
        ActionInputs(
            models=args.models,
            tasks=args.tasks,
            samples=args.samples,
            sandbox=args.sandbox,
            paper=args.paper,
            shard=args.shard,
            fail_under=args.fail_under,
            results_dir=args.results_dir,
            tasks_dir=args.tasks_dir,
            registry=args.registry,
            workers=args.workers,
            concurrency=args.concurrency,
            max_cost=args.max_cost,
            mode=args.mode,
            comment=args.comment,
        ),
        shards=args.shards,
    )
    outputs = {"notes": "\n".join(outcome.notes), "new-records": str(outcome.new_records)}
    if outcome.report is not None and outcome.report_path is not None:
        outputs |= {
            "scaled-pass-rate": headline_score(outcome.report, outcome.models),
            "results-path": str(outcome.report_path.parent.resolve()),
            "report-path": str(outcome.report_path.resolve()),
        }
    set_outputs(outputs)
    return outcome.exit_code


def run_baseline(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.github import (
        DEFAULT_ARTIFACT,
        GitHubContext,
        fetch_artifact_report,
        load_report,
        pull_base_branch,
        set_outputs,
    )

    context = GitHubContext.from_env()
    report = None
    try:
        if args.path:
            report = load_report(Path(args.path)).model_copy(update={"source": args.path})
        elif args.pr is None and context.pull_number is None:
            print("rcb: not a pull request: no base branch to compare with", file=sys.stderr)
        elif not context.token:
            print("rcb: no github-token: not comparing with the base branch", file=sys.stderr)
        else:
            branch = args.branch or (
                pull_base_branch(context, args.pr)
                if args.pr is not None
                else context.pull_base_branch
            )
            found = fetch_artifact_report(
                context, branch, pull=args.pr, artifact=args.artifact or DEFAULT_ARTIFACT
            )
            if found is None:
                print(
                    f"rcb: no {args.artifact or DEFAULT_ARTIFACT} artifact from {branch}: "
                    "nothing to compare with",
                    file=sys.stderr,
                )
            else:
                report = found.report.model_copy(update={"source": found.source})
    except RcbError as exc:
        _warn(f"base branch's results not used: {exc}")
        report = None
    if report is None:
        set_outputs({"path": ""})
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report.to_json(), encoding="utf-8")
    print(f"rcb: base branch's report: {report.source or args.out}", file=sys.stderr)
    set_outputs({"path": str(args.out.resolve())})
    return 0


def _comparison(report: Report, baseline: str) -> Comparison | None:
    from rcb_action.errors import RcbError
    from rcb_action.github import compare_reports, load_report

    if not baseline:
        return None
    try:
        base = load_report(Path(baseline))
    except RcbError as exc:
        _warn(f"base branch's results not used: {exc}")
        return None
    return compare_reports(report, base, source=base.source)


def run_gate(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.github import load_report, regressions

    if not str(args.fail_on_regression).strip():
        return 0
    try:
        points = float(args.fail_on_regression)
    except ValueError:
        raise RcbError(
            f"--fail-on-regression: '{args.fail_on_regression}' is not a number of points"
        ) from None
    if points < 0:
        raise RcbError(f"--fail-on-regression: {points:g} is negative; give points to allow")
    comparison = _comparison(load_report(args.report), args.baseline)
    if comparison is None:
        print(
            "rcb: no base branch report: the regression gate has nothing to compare",
            file=sys.stderr,
        )
        return 0
    if not any(c.paired for c in comparison.models):
        print(
            "rcb: no model has per-snippet outcomes in both reports: regression gate not applied",
            file=sys.stderr,
        )
        return 0
    found = regressions(comparison, points)
    for line in found:
        print(f"rcb: regression: {line}", file=sys.stderr)
    if not found:
        print(
            f"rcb: no model fell by more than {points:g} points (paired 95% interval)",
            file=sys.stderr,
        )
    return 1 if found else 0


def _note_lines(notes: list[str]) -> list[str]:
    """Each line of each ``--note`` a note of its own (a step output holds several, one a
    line); blank ones dropped."""
    return [line.strip() for note in notes for line in note.splitlines() if line.strip()]


def run_summary(args: argparse.Namespace) -> int:
    from rcb_action.github import append_summary, load_report, render_summary

    report = load_report(args.report)
    markdown = render_summary(
        report,
        comparison=_comparison(report, args.baseline),
        notes=_note_lines(args.note),
        title=args.title,
    )
    if not append_summary(markdown):
        print(markdown)
    return 0


def _default_key(report: Report, shard: str) -> str:
    models = sorted(report.models)
    seed = "|".join(
        [os.environ.get("GITHUB_WORKFLOW", ""), os.environ.get("GITHUB_JOB", ""), *models, shard]
    )
    job = os.environ.get("GITHUB_JOB") or "rcb"
    return f"{job}-{hashlib.sha1(seed.encode()).hexdigest()[:10]}"


def run_comment(args: argparse.Namespace) -> int:
    from github import GithubException

    from rcb_action.errors import RcbError
    from rcb_action.github import (
        MARKER_PATTERN,
        VERDICT_KEY,
        GitHubContext,
        comment_marker,
        github_client,
        load_report,
        read_verdict,
        render_comment,
        render_verdict,
        token_author,
        upsert_comment,
    )

    if not _bool("enabled", args.enabled):
        print("rcb: comment disabled", file=sys.stderr)
        return 0
    context = GitHubContext.from_env()
    number = args.pr
    verdict = None
    if args.verdict_file is not None:
        if not args.head_sha:
            raise RcbError("--verdict-file needs --head-sha: the commit the trusted event names")
        verdict = read_verdict(args.verdict_file)
        if verdict.head_sha != args.head_sha:
            raise RcbError(
                f"{args.verdict_file}: head_sha {verdict.head_sha} is not the validated commit "
                f"{args.head_sha}"
            )
        number = verdict.pull
    number = number if number is not None else context.pull_number
    if number is None:
        print("rcb: not a pull request: no comment", file=sys.stderr)
        return 0

    if verdict is not None:
        # Rendered here, by trusted code, from checked data: every string escaped.
        body = render_verdict(verdict, run_url=args.run_url)
        key = args.key or VERDICT_KEY
    elif args.body_file is not None:
        # A body made elsewhere (e.g. by a pull request's run) may not carry markers that
        # would make it pass for another of rcb's comments.
        body = MARKER_PATTERN.sub("", args.body_file.read_text(encoding="utf-8")).lstrip()
        key = args.key or VERDICT_KEY
    else:
        report = load_report(args.report)
        key = args.key or _default_key(report, args.shard)
        body = render_comment(
            report,
            marker=comment_marker(key),
            comparison=_comparison(report, args.baseline),
            notes=_note_lines(args.note),
            run_url=context.run_url,
            title=args.title,
        )

    def refused(message: str) -> int:
        if args.strict:
            raise RcbError(message)
        _warn(message)
        return 0

    if not context.token:
        return refused("no github-token: the pull-request comment was not posted")
    if not context.repository:
        return refused("GITHUB_REPOSITORY is not set: the pull-request comment was not posted")
    try:
        client = github_client(context)
        repo = client.get_repo(context.repository)
        if args.head_sha:
            head = repo.get_pull(number).head.sha
            if head != args.head_sha:
                what = "verdict" if verdict is not None else "scores"
                print(
                    f"rcb: pull request #{number} has moved on to {head}; "
                    f"not posting the {what} for {args.head_sha}",
                    file=sys.stderr,
                )
                return 0
        author = args.author or token_author(client)
        result = upsert_comment(repo.get_issue(number), key, body, author=author)
    except GithubException as exc:
        hint = " (a pull request from a fork gets a read-only token)" if exc.status == 403 else ""
        return refused(f"the pull-request comment was not posted: API {exc.status}{hint}")
    print(f"rcb: {result.action} comment {result.id} on #{number}: {result.url}", file=sys.stderr)
    return 0


def run_plan(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.github import (
        check_submissions,
        find_submissions,
        plan_evaluation,
        set_outputs,
        split_list,
    )
    from rcb_action.tasks import resolve_tasks_dir

    try:
        shards = int(args.shards)
    except ValueError:
        raise RcbError(f"--shards {args.shards!r}: give a whole number") from None
    tasks_dir = resolve_tasks_dir(args.tasks_dir)
    submissions: list[Submission] = []
    if args.submissions:
        submissions, problems = check_submissions(
            find_submissions(Path(args.submissions)), tasks_dir
        )
        for problem in problems:
            _warn(f"submission left out: {problem}")
    plan = plan_evaluation(
        split_list(args.models),
        tasks_dir=tasks_dir,
        shards=shards,
        tasks=",".join(split_list(args.tasks)) or None,
        runner=args.runner,
        gpu_runner=args.gpu_runner or None,
        submissions=submissions,
    )
    for note in plan.notes:
        print(f"rcb: {note}", file=sys.stderr)
    print(
        f"rcb: {len(plan.legs)} matrix job(s): {len(plan.cpu_tasks)} CPU task(s), "
        f"{len(plan.gpu_tasks)} GPU task(s)",
        file=sys.stderr,
    )
    set_outputs(
        {
            "matrix": json.dumps(plan.matrix(), separators=(",", ":")),
            "legs": str(len(plan.legs)),
            "notes": "\n".join(plan.notes),
        }
    )
    return 0


def run_changed(args: argparse.Namespace) -> int:
    from rcb_action.github import (
        COMPLETIONS_FILE,
        MODEL_FILE,
        annotation,
        changed_files,
        classify_changes,
        set_outputs,
    )

    changes = classify_changes(changed_files(args.base, args.head), root=Path.cwd())
    for problem in changes.problems:
        print(annotation("error", problem.message, file=problem.path, line=problem.line))
    tasks = [p.as_posix() for p in changes.tasks]
    subs = [p.as_posix() for p in changes.submissions]
    print(f"rcb: changed tasks: {' '.join(tasks) or '(none)'}", file=sys.stderr)
    print(f"rcb: changed submissions: {' '.join(subs) or '(none)'}", file=sys.stderr)
    set_outputs(
        {
            "tasks": " ".join(tasks),
            "submissions": " ".join(subs),
            "models": ",".join(f"replay:{s}/{COMPLETIONS_FILE}" for s in subs),
            "registries": ",".join(f"{s}/{MODEL_FILE}" for s in subs),
        }
    )
    return 1 if changes.problems else 0


def run_submissions(args: argparse.Namespace) -> int:
    from rcb_action.github import annotation, check_submissions, find_submissions

    folders = args.dirs or find_submissions(args.root)
    found, problems = check_submissions(folders, args.tasks_dir)
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)
        print(annotation("error", problem.message, file=problem.path, line=problem.line))
    for submission in found:
        print(f"ok    {submission.root}: model {submission.model}", file=sys.stderr)
    print(
        f"rcb: {len(found)} of {len(folders)} submission(s) valid",
        file=sys.stderr,
    )
    return 1 if problems else 0


def run_verdict(args: argparse.Namespace) -> int:
    from rcb_action.errors import RcbError
    from rcb_action.github import (
        VERDICT_FILE,
        GitHubContext,
        append_summary,
        build_verdict,
        load_report,
        render_verdict,
        set_outputs,
        split_list,
        write_verdict,
    )
    from rcb_action.sandbox import host_gpus

    def read(path: Path | None) -> str:
        return path.read_text(encoding="utf-8", errors="replace") if path and path.is_file() else ""

    report = None
    if args.submissions_report and Path(args.submissions_report).is_file():
        try:
            report = load_report(Path(args.submissions_report))
        except RcbError as exc:
            _warn(f"the submissions' report not read: {exc}")
    runner_gpu = bool(host_gpus()) if not args.runner_gpu else _bool("runner-gpu", args.runner_gpu)
    verdict = build_verdict(
        pull=args.pr,
        head_sha=args.head_sha,
        tasks=split_list(args.tasks),
        validate_status=args.validate_status,
        validate_log=read(args.validate_log),
        submissions=split_list(args.submissions),
        submissions_status=args.submissions_status,
        submissions_report=report,
        submissions_log=read(args.submissions_log),
        runner_has_gpu=runner_gpu,
    )
    write_verdict(args.out / VERDICT_FILE, verdict)
    append_summary(render_verdict(verdict, run_url=GitHubContext.from_env().run_url))
    set_outputs({"status": verdict.status.replace(" ", "-")})
    print(f"rcb: verdict: {verdict.status}", file=sys.stderr)
    return 0
