"""``rcb reproduce``: every (task, model, sample) attempt, after the task's gold run, resumable.

For each reproduction task: build its wheelhouse (cached), run its gold
reproduction through the same stages (cached per task hash and sandbox); a task
whose gold run fails is invalid, reported as such, and no model is run on it or
blamed for it. Then each model's attempts run one after another, each appended to
``OUT/reproduction.jsonl`` as it finishes. A rerun skips every attempt already
scored with the same task hash; Ctrl-C removes the sandbox and keeps what is done.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rcb_action.agent import AgentModel, LiteLLMAgent, ReplayAgent
from rcb_action.errors import RcbError
from rcb_action.models import Model, get_model, load_registry
from rcb_action.names import path_key
from rcb_action.papers import paper_for
from rcb_action.paths import cache_dir
from rcb_action.reproduce._attempt import AttemptSetting, run_attempt
from rcb_action.reproduce._records import (
    GOLD_FILE,
    LOGS_DIR,
    ReproductionRecord,
    ReproductionStore,
    read_reproduction_records,
)
from rcb_action.reproduce._reference import (
    BASELINE_FLAGS,
    BASELINE_PREFIX,
    BaselineAgent,
    ReferenceAgent,
)
from rcb_action.reproduce._wheelhouse import allowed_packages, build_wheelhouse
from rcb_action.sandbox import Limits, SandboxBackend, get_backend
from rcb_action.tasks import Task, load_tasks_of_kind, resolve_tasks_dir

GOLD_MODEL = "reference"


@dataclass
class ReproduceConfig:
    """Everything ``rcb reproduce`` takes."""

    models: list[str]
    out: Path = Path("results")
    tasks_dir: Path | None = None
    tasks: str | None = None
    samples: int = 1
    sandbox: str = "local"
    judge: str | None = None
    registry_files: list[Path] = field(default_factory=list)
    progress: bool = True
    limits: Limits = field(default_factory=Limits)


@dataclass
class ReproduceSummary:
    """What a run did."""

    out: Path
    planned: int
    skipped: int
    done: int = 0
    invalid_tasks: dict[str, str] = field(default_factory=dict)
    skipped_tasks: dict[str, str] = field(default_factory=dict)
    models: list[str] = field(default_factory=list)


def _safe(name: str) -> str:
    """A folder name for ``name`` that no other name shares (see ``path_key``)."""
    return path_key(name)


def get_agent(spec: str, config: ReproduceConfig) -> AgentModel:
    """``reference`` (the task's gold reproduction), ``baseline:KIND`` (a scripted agent
    that skips the work, see ``BASELINES``), ``replay:FILE`` or a litellm name.

    Raises:
        RcbError: an empty name or a malformed replay file.
    """
    if not spec.strip():
        raise RcbError("--model: empty model name")
    if spec == GOLD_MODEL:
        return ReferenceAgent()
    if spec.startswith(BASELINE_PREFIX):
        try:
            return BaselineAgent(spec.removeprefix(BASELINE_PREFIX))
        except ValueError as exc:
            raise RcbError(f"--model {spec}: {exc}") from None
    if spec.startswith("replay:"):
        path = spec.removeprefix("replay:")
        if not path:
            raise RcbError("--model replay:FILE: give the path of a JSONL file of agent turns")
        return ReplayAgent(Path(path))
    return LiteLLMAgent(spec, load_registry(config.registry_files).get(spec))


def get_judge(spec: str, config: ReproduceConfig) -> Model:
    """The judge: a litellm model.

    Raises:
        RcbError: a built-in model was named.
    """
    model = get_model(spec, load_registry(config.registry_files))
    if not model.calls_provider:
        raise RcbError(f"--judge {spec}: the judge must be a litellm model, e.g. openai/gpt-4o")
    return model


def is_done(record: ReproductionRecord | None, task: Task) -> bool:
    return record is not None and record.scored and record.task_sha == task.sha


def gold_passed(record: ReproductionRecord) -> bool:
    return record.scored and record.failed_stage is None


def gold_failure(record: ReproductionRecord) -> str:
    """Why a gold run failed: the harness error, or the first stage's error."""
    if not record.scored:
        return f"harness error: {record.message}"
    return next((f"{s.stage}: {s.error}" for s in record.stages.values() if s.error), "")


def _gold_cache(task: Task, sandbox: str) -> Path:
    where = sandbox if sandbox != "docker" else f"docker-{os.environ.get('RCB_BASE_IMAGE', '')}"
    return cache_dir("repro-gold") / f"{task.id}-{task.sha}-{_safe(where)}.json"


def _python_version(backend: SandboxBackend, task: Task) -> str:
    """The sandbox's python3 version (``3.11``): the wheelhouse must match it."""
    sandbox = backend.open_clean(task)
    try:
        result = sandbox.exec(
            ["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], timeout_s=60
        )
    finally:
        backend.release(sandbox)
    version = result.stdout.strip()
    if result.returncode != 0 or not re.fullmatch(r"\d+\.\d+", version):
        raise RcbError(
            f"--sandbox {backend.name}: python3 does not run in a clean sandbox "
            f"({(result.stderr.strip() or 'no output')[-200:]}); the base system needs python3"
        )
    return version


def _say(config: ReproduceConfig, text: str) -> None:
    if config.progress:
        print(f"rcb: reproduce: {text}", file=sys.stderr, flush=True)


def _describe(record: ReproductionRecord, seconds: float) -> str:
    if not record.scored:
        return f"harness error ({record.message}) after {seconds:.0f} s"
    outcome = "reproduced" if record.failed_stage is None else f"failed at {record.failed_stage}"
    review = ", needs review" if record.needs_review else ""
    return f"{outcome}{review} in {seconds:.0f} s"


def _cached_gold(task: Task, sandbox: str) -> ReproductionRecord | None:
    """The gold run that passed earlier for this task hash and sandbox, if any."""
    cached = _gold_cache(task, sandbox)
    if not cached.is_file():
        return None
    record = ReproductionRecord.model_validate_json(cached.read_text(encoding="utf-8"))
    record.message = f"gold run passed earlier (cached in {cached})"
    return record


def gold_run(
    task: Task, setting: AttemptSetting, config: ReproduceConfig
) -> tuple[ReproductionRecord, bool]:
    """The task's gold run, from the cache when it passed before (task hash, sandbox).

    Returns:
        (the record, whether it was run now).
    """
    earlier = _cached_gold(task, config.sandbox)
    if earlier is not None:
        return earlier, False
    started = time.monotonic()
    # The gold run proves the task runs and its numbers hold; its plan is not judged.
    unjudged = dataclasses.replace(setting, judge=None)
    record = run_attempt(task, ReferenceAgent(), 0, unjudged, Path(LOGS_DIR) / "_gold" / task.id)
    _say(config, f"{task.id}: gold run {_describe(record, time.monotonic() - started)}")
    if gold_passed(record):
        _gold_cache(task, config.sandbox).write_text(record.model_dump_json(), encoding="utf-8")
    return record, True


def check_gold(task: Task, backend: SandboxBackend, out: Path) -> tuple[ReproductionRecord, bool]:
    """``rcb validate`` for a reproduction task: its gold run, as ``rcb reproduce`` runs it.

    The wheelhouse is built (cached) for the sandbox's Python; a gold run that passed
    before for the same task hash and sandbox is taken from the cache. Step logs go
    under ``out``.

    Returns:
        (the record, whether it was run now).

    Raises:
        RcbError: no python3 in the sandbox, or the task's packages cannot be fetched.
    """
    earlier = _cached_gold(task, backend.name)
    if earlier is not None:  # no sandbox or wheelhouse needed
        return earlier, False
    packages = allowed_packages(task)
    setting = AttemptSetting(
        backend, build_wheelhouse(packages, _python_version(backend, task)), packages, out
    )
    config = ReproduceConfig(models=[], out=out, sandbox=backend.name, progress=False)
    return gold_run(task, setting, config)


def adversary_escape(kind: str, record: ReproductionRecord) -> str | None:
    """None when adversary ``kind`` failed ``result_check`` with its own flag; else how it
    got away (passed, failed elsewhere, or failed on the numbers without the flag)."""
    if not record.scored:
        return f"ended in a harness error ({record.message})"
    flag = re.compile(BASELINE_FLAGS[kind])
    if record.failed_stage == "result_check" and any(flag.search(r) for r in record.review_reasons):
        return None
    if record.failed_stage is None:
        return "passes every stage"
    return (
        f"fails at {record.failed_stage} but is not flagged as what it is ({gold_failure(record)})"
    )


def check_adversaries(
    task: Task, backend: SandboxBackend, out: Path, gold: ReproductionRecord
) -> dict[str, str | None]:
    """``rcb validate --mutants`` for a reproduction task: every adversary built from its
    reference (``BASELINE_FLAGS``) attempts it as ``rcb reproduce`` would run it; each
    must fail ``result_check`` with its own flag (see :func:`adversary_escape`).

    Returns:
        each adversary's escape, None when it was caught.

    Raises:
        RcbError: no python3 in the sandbox, or the task's packages cannot be fetched.
    """
    packages = allowed_packages(task)
    setting = AttemptSetting(
        backend, build_wheelhouse(packages, _python_version(backend, task)), packages, out
    )
    gold_times = [float(r["duration_s"]) for r in gold.reruns if "duration_s" in r]
    if gold_times:
        setting.gold_run_s[task.id] = min(gold_times)
    escapes: dict[str, str | None] = {}
    for kind in BASELINE_FLAGS:
        agent = BaselineAgent(kind)
        log_rel = Path(LOGS_DIR) / _safe(agent.name) / task.id / "s0"
        escapes[kind] = adversary_escape(kind, run_attempt(task, agent, 0, setting, log_rel))
    return escapes


def reproduce(
    config: ReproduceConfig,
    *,
    agents: list[AgentModel] | None = None,
    judge: Model | None = None,
) -> ReproduceSummary:
    """Run the reproduction track; see :class:`ReproduceConfig`.

    Args:
        config: what to run.
        agents: ready-made agents (tests pass litellm agents with mock turns); by
            default they are made from ``config.models``.
        judge: a ready-made judge; by default made from ``config.judge`` (none: the
            judged dimensions are not graded).

    Raises:
        RcbError: a usage or input problem (no task, unknown model, missing key, no sandbox).
        KeyboardInterrupt: Ctrl-C or SIGTERM, after the sandbox is removed; every
            finished attempt is on disk and a rerun resumes.
    """
    if config.samples < 1:
        raise RcbError("--samples must be at least 1")
    tasks = load_tasks_of_kind(resolve_tasks_dir(config.tasks_dir), config.tasks, "reproduction")
    agents = agents or [get_agent(spec, config) for spec in config.models]
    names = [a.name for a in agents]
    if len(set(names)) != len(names):
        raise RcbError(f"--model: the same model is given twice ({', '.join(names)})")
    if judge is None and config.judge:
        judge = get_judge(config.judge, config)
    store = ReproductionStore(config.out)
    gold_store = ReproductionStore(config.out, GOLD_FILE)
    done = store.latest()
    plan = [(t, a, s) for t in tasks for a in agents for s in range(config.samples)]
    todo = [(t, a, s) for t, a, s in plan if not is_done(done.get((t.id, a.name, s)), t)]
    summary = ReproduceSummary(config.out, len(plan), len(plan) - len(todo), models=names)
    if not todo:
        _say(config, f"nothing to do: all {len(plan)} attempts already in {store.path}")
        return summary
    for agent in {a.name: a for _, a, _ in todo}.values():
        agent.check()
    if judge is not None:
        judge.check()
    # A model or a judge reads the paper: have every one before the first attempt starts.
    for task in {t.id: t for t, a, _ in todo if a.calls_provider or judge}.values():
        paper_for(task)
    _say(
        config,
        f"{len(todo)} attempts to run ({summary.skipped} already done), "
        f"sandbox {config.sandbox}; results in {store.path}",
    )
    backend = get_backend(config.sandbox, config.limits)
    try:
        version = _python_version(backend, todo[0][0])
        for task in tasks:
            items = [(a, s) for t, a, s in todo if t is task]
            if not items:
                continue
            skip = backend.skip_reason(task)
            if skip:
                summary.skipped_tasks[task.id] = skip
                _say(config, f"{task.id}: {skip}")
                continue
            packages = allowed_packages(task)
            setting = AttemptSetting(
                backend, build_wheelhouse(packages, version), packages, config.out, judge
            )
            gold, fresh = gold_run(task, setting, config)
            gold_store.append(gold)
            if not gold_passed(gold):
                why = gold_failure(gold)
                summary.invalid_tasks[task.id] = why
                _say(
                    config, f"{task.id}: INVALID, its gold run fails ({why}); no model is run on it"
                )
                continue
            gold_times = [float(r["duration_s"]) for r in gold.reruns if "duration_s" in r]
            if gold_times:
                setting.gold_run_s[task.id] = min(gold_times)
            for agent, sample in items:
                started = time.monotonic()
                if fresh and isinstance(agent, ReferenceAgent) and sample == 0 and not judge:
                    record = gold  # the gold run is this attempt
                else:
                    log_rel = Path(LOGS_DIR) / _safe(agent.name) / task.id / f"s{sample}"
                    record = run_attempt(task, agent, sample, setting, log_rel)
                store.append(record)
                summary.done += 1
                outcome = _describe(record, time.monotonic() - started)
                _say(config, f"{task.id} / {agent.name} / s{sample}: {outcome}")
    except KeyboardInterrupt:
        print(
            f"\nrcb: interrupted; {summary.done} new records are saved in {store.path}. "
            "Run the same command again to resume.",
            file=sys.stderr,
        )
        raise
    finally:
        backend.close()
    return summary


def gold_summary(out: Path) -> dict[str, dict[str, object]]:
    """Each task's latest gold run in ``out``: whether it passed, and why not."""
    latest = {r.task: r for r in read_reproduction_records(out / GOLD_FILE)}
    return {
        task: {
            "valid": gold_passed(record),
            "failed_stage": record.failed_stage,
            "message": "" if gold_passed(record) else gold_failure(record),
            "task_sha": record.task_sha,
        }
        for task, record in sorted(latest.items())
    }
