"""The Action's evaluate step: its inputs turned into one evaluation (or one merge of
shards), then a report.

Inputs arrive as strings (empty when not given). They are checked here so that a
bad input is one line naming the input, not an argparse usage dump.

Two kinds of run score less than their inputs ask for, and say so in the notes that
reach the job summary: a shard leg with ``comment: false`` (partial data: neither
``fail-under`` nor ``fail-on-regression`` is applied; the ``mode: merge`` job gates on
all the shards), and a pull request from a fork (GitHub gives it no secrets, so the
models that need a provider key are left out; the two-workflow recipe scores them).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rcb_action.errors import RcbError
from rcb_action.github._context import GitHubContext
from rcb_action.github._plan import split_list
from rcb_action.github._workflow import annotation, append_summary
from rcb_action.report import Report

if TYPE_CHECKING:
    from rcb_action.runner import EvalConfig

REPORT_JSON = "report.json"
REPORT_MARKDOWN = "report.md"
_PAPER = ("with", "without", "both", "notes")
_SANDBOX = ("local", "docker")
_MODES = ("evaluate", "merge")
_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off")
# Models that answer without a provider, hence without a key.
KEYLESS_MODELS = ("reference", "null")
# Where the Action's README explains the two-workflow recipe for pull requests from forks.
FORKS_ANCHOR = "README.md#pull-requests-from-forks"


@dataclass(frozen=True)
class ActionInputs:
    """The Action's inputs, as the runner hands them over (strings)."""

    models: str = "reference"
    tasks: str = ""
    samples: str = "1"
    sandbox: str = "local"
    paper: str = "with"
    shard: str = ""
    fail_under: str = ""
    results_dir: str = "rcb-results"
    tasks_dir: str = ""
    registry: str = ""
    workers: str = ""
    concurrency: str = ""
    max_cost: str = ""
    mode: str = "evaluate"
    comment: str = "true"
    pr_number: str = ""
    run_id: str = ""


@dataclass(frozen=True)
class ActionPlan:
    """What the Action's ``mode``, ``comment``, ``shard``, ``pr-number`` and ``run-id``
    inputs ask for, checked before anything is scored.

    Attributes:
        mode: ``evaluate`` (score the models) or ``merge`` (join the shards' results).
        comment: whether the pull-request comment is posted.
        gate: whether ``fail-under`` and ``fail-on-regression`` apply: not on a shard leg
            with ``comment: false``, whose scores are partial.
        pull: the pull request to comment on, when ``pr-number`` names one.
        run_id: the workflow run whose artifacts a merge joins; None for this run.
    """

    mode: Literal["evaluate", "merge"] = "evaluate"
    comment: bool = True
    gate: bool = True
    pull: int | None = None
    run_id: int | None = None

    @property
    def notes(self) -> list[str]:
        """What the job summary should say about this plan."""
        if self.gate:
            return []
        return [
            "A shard leg with `comment: false`: its scores are partial, so no comment is "
            "posted and neither `fail-under` nor `fail-on-regression` is applied here; the "
            "`mode: merge` job comments once and gates on all the shards."
        ]


@dataclass
class EvaluateOutcome:
    """What the step did: the exit code, the report when the run finished, and the notes
    for the job summary and the comment."""

    exit_code: int
    config: EvalConfig | None = None
    report: Report | None = None
    report_path: Path | None = None
    models: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Attempts this run recorded (0: everything was in the results folder already).
    new_records: int = 0


def _positive_int(name: str, value: str, what: str = "a whole number") -> int:
    if not re.fullmatch(r"\d+", value.strip()) or int(value) < 1:
        raise RcbError(f"input '{name}': '{value}' is not {what} of at least 1")
    return int(value)


def _choice(name: str, value: str, choices: Sequence[str]) -> str:
    if value.strip() not in choices:
        raise RcbError(f"input '{name}': '{value}' is not one of {', '.join(choices)}")
    return value.strip()


def _flag(name: str, value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE or not lowered:
        return True
    if lowered in _FALSE:
        return False
    raise RcbError(f"input '{name}': '{value}' is not true or false")


def _optional_int(name: str, value: str, what: str) -> int | None:
    return _positive_int(name, value, what) if value.strip() else None


def action_plan(inputs: ActionInputs) -> ActionPlan:
    """The run the ``mode``, ``comment``, ``shard``, ``pr-number`` and ``run-id`` inputs
    ask for.

    Raises:
        RcbError: one of them is malformed, or ``shard`` is given with ``mode: merge``
            (one line naming the input).
    """
    mode = _choice("mode", inputs.mode or "evaluate", _MODES)
    comment = _flag("comment", inputs.comment)
    shard = inputs.shard.strip()
    if mode == "merge" and shard:
        raise RcbError(
            f"input 'shard': '{shard}' with mode: merge, which joins every shard; leave it empty"
        )
    return ActionPlan(
        mode=mode,  # type: ignore[arg-type]  # one of _MODES, checked above
        comment=comment,
        gate=comment or not shard,
        pull=_optional_int("pr-number", inputs.pr_number, "a pull-request number"),
        run_id=_optional_int("run-id", inputs.run_id, "a workflow run id"),
    )


def fork_pull_request(context: GitHubContext) -> bool:
    """Whether the run is a ``pull_request`` from a fork, which GitHub gives no secrets
    (and a read-only token). A payload without the head repository is not taken for one."""
    pull = context.event.get("pull_request")
    if context.event_name != "pull_request" or not isinstance(pull, dict):
        return False
    head, base = pull.get("head"), pull.get("base")
    if not isinstance(head, dict) or "repo" not in head:
        return False
    head_repo = head.get("repo")
    base_repo = base.get("repo") if isinstance(base, dict) else None
    base_name = base_repo.get("full_name") if isinstance(base_repo, dict) else None
    # A fork deleted since the pull request was opened has no repo left: still a fork.
    head_name = head_repo.get("full_name") if isinstance(head_repo, dict) else None
    return head_name != (base_name or context.repository)


def needs_key(spec: str) -> bool:
    """Whether a model spec calls a provider (and so needs its key): anything but
    ``reference``, ``null`` and ``replay:FILE``."""
    return spec not in KEYLESS_MODELS and not spec.startswith("replay:")


def forks_docs_url(env: Mapping[str, str] | None = None) -> str:
    """The README section on pull requests from forks, in the Action's own repository at
    its ref: ``GITHUB_ACTION_REPOSITORY`` and ``GITHUB_ACTION_REF``, else read from
    ``GITHUB_ACTION_PATH`` (``.../_actions/OWNER/REPO/REF``, which a composite action's
    own steps always have), else this repository's (``uses: ./``)."""
    env = os.environ if env is None else env
    server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    repo, ref = env.get("GITHUB_ACTION_REPOSITORY", ""), env.get("GITHUB_ACTION_REF", "")
    parts = Path(env.get("GITHUB_ACTION_PATH", "")).parts
    if not repo and "_actions" in parts[:-3]:
        at = parts.index("_actions")
        repo, ref = "/".join(parts[at + 1 : at + 3]), parts[at + 3]
    repo = repo or env.get("GITHUB_REPOSITORY") or "OWNER/rcb"
    return f"{server}/{repo}/blob/{ref or 'main'}/{FORKS_ANCHOR}"


def fork_note(left_out: Sequence[str], *, scored: Sequence[str]) -> str:
    """The one line that says which models a fork's pull request could not score, and where
    the recipe that scores them is."""
    what = f"scored {', '.join(scored)} only" if scored else "nothing scored"
    return (
        f"A pull request from a fork gets no secrets, so no provider key: {', '.join(left_out)} "
        f"not scored ({what}). Model scores on fork pull requests need the two-workflow "
        f"recipe: {forks_docs_url()}"
    )


def evaluate_config(inputs: ActionInputs) -> EvalConfig:
    """The evaluation the Action's inputs ask for, as typed options (the same defaults
    as ``rcb evaluate``).

    Raises:
        RcbError: an input is malformed (one line naming it).
    """
    from rcb_action.runner import DEFAULT_CONCURRENCY, EvalConfig, default_workers, parse_shard

    models = split_list(inputs.models)
    if not models:
        raise RcbError("input 'models': give at least one model, e.g. reference or openai/gpt-4o")
    shard = None
    if inputs.shard.strip():
        if not re.fullmatch(r"\d+/\d+", inputs.shard.strip()):
            raise RcbError(f"input 'shard': '{inputs.shard}' is not I/N, e.g. 2/4")
        shard = parse_shard(inputs.shard.strip())
    max_cost = None
    if inputs.max_cost.strip():
        try:
            max_cost = float(inputs.max_cost)
            if max_cost < 0:
                raise ValueError
        except ValueError:
            raise RcbError(
                f"input 'max-cost': '{inputs.max_cost}' is not a number of dollars, 0 or more"
            ) from None
    paper = _choice("paper", inputs.paper or "with", _PAPER)
    return EvalConfig(
        models=models,
        out=Path(inputs.results_dir or "rcb-results"),
        tasks_dir=Path(inputs.tasks_dir.strip()) if inputs.tasks_dir.strip() else None,
        tasks=",".join(split_list(inputs.tasks)) or None,
        samples=_positive_int("samples", inputs.samples or "1"),
        paper=paper,  # type: ignore[arg-type]  # one of _PAPER, checked above
        workers=(
            _positive_int("workers", inputs.workers)
            if inputs.workers.strip()
            else default_workers()
        ),
        sandbox=_choice("sandbox", inputs.sandbox or "local", _SANDBOX),
        shard=shard,
        registry_files=[Path(p) for p in split_list(inputs.registry)],
        progress=False,
        concurrency=(
            _positive_int("concurrency", inputs.concurrency)
            if inputs.concurrency.strip()
            else DEFAULT_CONCURRENCY
        ),
        max_cost_usd=max_cost,
    )


def fail_under(inputs: ActionInputs) -> float | None:
    """The ``fail-under`` input as points, or None when not given.

    Raises:
        RcbError: it is not a number.
    """
    if not inputs.fail_under.strip():
        return None
    try:
        return float(inputs.fail_under)
    except ValueError:
        raise RcbError(f"input 'fail-under': '{inputs.fail_under}' is not a number") from None


def result_names(models: Sequence[str]) -> list[str]:
    """The names results are recorded under (a replay file may name its model)."""
    from rcb_action.models import ReplayModel

    names = []
    for spec in models:
        if spec.startswith("replay:"):
            names.append(ReplayModel(Path(spec.removeprefix("replay:"))).name)
        else:
            names.append(spec)
    return names


def error_annotation(message: str) -> str:
    """An ``::error`` line for a one-line rcb error, located when it names a file."""
    from rcb_action.validate import problem_from_error

    problem = problem_from_error(message)
    if problem.path and Path(problem.path).exists():
        return annotation(
            "error", problem.message, file=problem.path, line=problem.line, title="rcb"
        )
    return annotation("error", message, title="rcb")


def _input_error(exc: RcbError) -> None:
    print(f"rcb: error: {exc}", file=sys.stderr)
    print(error_annotation(str(exc)))


def run_evaluate(inputs: ActionInputs, *, shards: Path | None = None) -> EvaluateOutcome:
    """Run what the Action's inputs ask for: the evaluation
    (:func:`rcb_action.runner.run_evaluation`, as ``rcb evaluate`` does), or with
    ``mode: merge`` the join of the shards' results under ``shards``
    (:func:`run_merge`); then write the report next to the results.

    On a pull request from a fork, the models that need a provider key are left out
    (GitHub gives a fork no secrets) and a note says so; when none is left, nothing is
    scored, the job summary says why in one line, and the step succeeds.

    Usage and input errors (exit 2) print one line and an ``::error`` annotation
    that points at the file to fix when there is one.
    """
    from rcb_action.report import render_markdown
    from rcb_action.results import ResultStore
    from rcb_action.runner import finish_evaluation, run_evaluation

    try:
        plan = action_plan(inputs)
        if plan.mode == "merge":
            return run_merge(inputs, shards or Path("rcb-shards"))
        config = evaluate_config(inputs)
        threshold = fail_under(inputs) if plan.gate else None
        from_fork = fork_pull_request(GitHubContext.from_env())
    except RcbError as exc:
        _input_error(exc)
        return EvaluateOutcome(exit_code=2)
    notes = plan.notes
    if from_fork:
        keyed = [m for m in config.models if needs_key(m)]
        kept = [m for m in config.models if not needs_key(m)]
        if keyed:
            notes.append(fork_note(keyed, scored=kept))
            print(annotation("notice", notes[-1], title="rcb"))
        if not kept:
            append_summary("# rcb\n\n" + "".join(f"> {note}\n\n" for note in notes))
            return EvaluateOutcome(exit_code=0, config=config, notes=notes)
        config = replace(config, models=kept)
    try:
        names = result_names(config.models)
    except RcbError as exc:
        _input_error(exc)
        return EvaluateOutcome(exit_code=2)
    print(
        f"rcb: evaluating {', '.join(config.models)} into {config.out}", file=sys.stderr, flush=True
    )
    try:
        run = run_evaluation(config)
    except RcbError as exc:
        _input_error(exc)
        return EvaluateOutcome(exit_code=2, config=config, models=names, notes=notes)
    except KeyboardInterrupt:
        return EvaluateOutcome(exit_code=130, config=config, models=names, notes=notes)
    code = finish_evaluation(run, fail_under=threshold)
    # A shard can hold no attempt at all; its folder is still a results store to merge.
    ResultStore(config.out).path.touch(exist_ok=True)
    report_path = config.out / REPORT_JSON
    report_path.write_text(run.report.to_json(), encoding="utf-8")
    (config.out / REPORT_MARKDOWN).write_text(render_markdown(run.report), encoding="utf-8")
    return EvaluateOutcome(
        exit_code=code,
        config=config,
        report=run.report,
        report_path=report_path,
        models=names,
        notes=notes,
        new_records=run.summary.done,
    )


def results_cache_key(inputs: ActionInputs) -> str:
    """The prefix under which the Action caches the results folder of this evaluation:
    ``rcb-results-<run>-<tasks>-``, where ``<run>`` hashes the rcb version, the models
    (a replay file by its content), the registry files' content, samples, paper and
    shard, and ``<tasks>`` each selected task's hash. Each run that records something
    saves under the prefix and its own run id; a later run restores the newest entry
    with the prefix, so an unchanged evaluation makes no model call and no test run,
    and anything else gets another prefix (a results folder never mixes benchmarks).

    Raises:
        RcbError: an input is malformed, a replay or registry file is unreadable, or a
            task does not load.
    """
    import hashlib
    import json

    from rcb_action import __version__
    from rcb_action.github._release import sha256_of
    from rcb_action.tasks import load_tasks, resolve_tasks_dir

    config = evaluate_config(inputs)

    def digest(path: Path, what: str) -> str:
        try:
            return sha256_of(path)
        except OSError as exc:
            raise RcbError(f"input '{what}': {path}: {exc.strerror}") from None

    models = [
        f"replay:{digest(Path(spec.removeprefix('replay:')), 'models')}"
        if spec.startswith("replay:")
        else spec
        for spec in config.models
    ]
    run = {
        "rcb": __version__,
        "models": models,
        "registry": [digest(path, "registry") for path in config.registry_files],
        "samples": config.samples,
        "paper": config.paper,
        "shard": inputs.shard.strip(),
    }
    tasks = load_tasks(resolve_tasks_dir(config.tasks_dir), config.tasks)
    shas = {task.id: task.sha for task in tasks}

    def short(value: object) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]

    return f"rcb-results-{short(run)}-{short(shas)}-"


def shard_folders(shards: Path) -> list[Path]:
    """The results folders under ``shards`` (one per downloaded artifact, at any depth):
    every folder that holds a ``results.jsonl``, in a stable order; none when ``shards``
    is not there."""
    from rcb_action.results import RESULTS_FILE

    return sorted({p.parent for p in shards.rglob(RESULTS_FILE) if p.is_file()})


def run_merge(inputs: ActionInputs, shards: Path) -> EvaluateOutcome:
    """Join the shards' results folders under ``shards`` into ``results-dir`` (what
    ``rcb merge`` does), report on every model in them and apply ``fail-under`` to the
    merged scores: exit 1 when a model is below it.

    The folders are data (another run's artifacts, perhaps a fork's): records are read
    and checked, logs copied only from inside their own folder, nothing is executed.
    """
    from rcb_action.models import load_registry
    from rcb_action.report import build_report, print_report, render_markdown
    from rcb_action.results import RESULTS_FILE, ResultStore, merge_stores

    try:
        threshold = fail_under(inputs)
        folders = shard_folders(shards)
        if not folders and fork_pull_request(GitHubContext.from_env()):
            # A fork's legs had no key to score their models with, so nothing to upload.
            note = fork_note(["the shards' models"], scored=[])
            print(annotation("notice", note, title="rcb"))
            append_summary(f"# rcb\n\n> {note}\n")
            return EvaluateOutcome(exit_code=0, notes=[note])
        if not folders:
            raise RcbError(
                f"{shards}: no shard results ({RESULTS_FILE}) to merge: upload each shard's "
                "results-dir as an artifact whose name matches the shard-artifacts input"
            )
        out = Path(inputs.results_dir or "rcb-results")
        count = merge_stores(folders, out)
        store = ResultStore(out)
        store.path.touch(exist_ok=True)
        report = build_report(
            list(store.records()),
            load_registry([Path(p) for p in split_list(inputs.registry)]),
            source=str(out),
        )
    except RcbError as exc:
        _input_error(exc)
        return EvaluateOutcome(exit_code=2)
    print(
        f"rcb: merged {count} records from {len(folders)} shard folder(s) into {out}",
        file=sys.stderr,
    )
    print_report(report)
    code = 0
    low = report.below(threshold) if threshold is not None else []
    if low:
        print(f"rcb: below --fail-under {threshold}: {', '.join(low)}")
        code = 1
    report_path = out / REPORT_JSON
    report_path.write_text(report.to_json(), encoding="utf-8")
    (out / REPORT_MARKDOWN).write_text(render_markdown(report), encoding="utf-8")
    asked = [m for m in split_list(inputs.models) if m in report.models]
    return EvaluateOutcome(
        exit_code=code,
        report=report,
        report_path=report_path,
        models=asked or list(report.models),
    )


def headline_score(report: Report, models: Sequence[str]) -> str:
    """The first model's scaled pass@1 as text (the Action's ``scaled-pass-rate``)."""
    for name in models:
        entry = report.models.get(name)
        if entry and entry.scaled_pass_at_1 is not None:
            return f"{entry.scaled_pass_at_1:.2f}"
    return ""
