"""One attempt: an agent, a task, a clean sandbox; every stage run, checked and recorded.

Running and grading are kept apart: the attempt's folder under ``OUT/repro-logs``
holds the step log, each stage's check log, the plan, the files the agent left,
the harness's results.json and the judge's prompt and answer, which is everything
needed to re-grade it without running it again.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcb_action import __version__
from rcb_action.agent import AgentLoop, AgentModel, Budget, StepLog, Workbench, utc_now
from rcb_action.errors import RcbError
from rcb_action.models import Model, ModelCallError
from rcb_action.reproduce._data import read_splits
from rcb_action.reproduce._grade import ResultGrade, grade_results
from rcb_action.reproduce._judge import CONCLUSIONS_ID, judge_prompt, judge_scores, run_judge
from rcb_action.reproduce._records import (
    DIMENSIONS,
    JUDGED_DIMENSIONS,
    STAGES,
    JudgeRecord,
    ReproductionRecord,
    StageRecord,
    StageStatus,
)
from rcb_action.reproduce._rerun import (
    Rerun,
    data_flags,
    draw_seeds,
    merged_results,
    rerun_flags,
    run_again,
)
from rcb_action.reproduce._stages import (
    AGENT_STAGES,
    CONCLUSIONS_FILE,
    RESULTS,
    WORKDIR,
    Check,
    StageChecks,
    plan_guard,
    stage_instructions,
    system_prompt,
)
from rcb_action.reproduce._texts import PAPER_FILE, ReproductionTexts, reproduction_texts
from rcb_action.reproduce._wheelhouse import WHEELHOUSE_MOUNT, sandbox_pip_env
from rcb_action.sandbox import SandboxBackend
from rcb_action.tasks import EXPERIMENT_FILE, Task

# Files the judge is not shown as the attempt's code.
_NOT_CODE = {PAPER_FILE, EXPERIMENT_FILE, "plan.md", RESULTS, CONCLUSIONS_FILE}
# How the model's work on a stage ended, as the stage's log and error say it.
_ENDINGS = {
    "submitted": "",
    "stopped": "the model stopped calling tools",
    "budget": "the budget ran out: {limit}",
}


@dataclass
class AttemptSetting:
    """What every attempt of a run shares."""

    backend: SandboxBackend
    wheelhouse: Path
    packages: list[str]
    out: Path
    judge: Model | None = None
    # Each task's gold rerun time on this machine (the floor a rerun is measured against).
    gold_run_s: dict[str, float] = field(default_factory=dict)


def _stage(stage: str, status: StageStatus, **fields: Any) -> StageRecord:
    return StageRecord(stage=stage, status=status, success=status == "passed", **fields)


class _Attempt:
    def __init__(
        self, task: Task, agent: AgentModel, sample: int, setting: AttemptSetting, log_rel: Path
    ) -> None:
        assert task.config.reproduction is not None and task.expected is not None
        self.task = task
        self.agent = agent
        self.sample = sample
        self.setting = setting
        self.settings = task.config.reproduction
        self.log_rel = log_rel
        self.log_dir = setting.out / log_rel
        self.stages: dict[str, StageRecord] = {}
        self.failed: str | None = None
        self.exhausted: str | None = None
        self.plan = ""
        self.results: dict[str, Any] | None = None
        self.own_results: dict[str, Any] | None = None
        self.rerun: Rerun | None = None
        self.grade: ResultGrade | None = None
        self.result_lines: list[str] = []
        self.files: dict[str, str] | None = None

    def rel(self, name: str) -> str:
        return (self.log_rel / name).as_posix()

    def write_log(self, name: str, text: str) -> str:
        (self.log_dir / name).write_text(text, encoding="utf-8")
        return self.rel(name)

    def record_stage(
        self,
        stage: str,
        started_at: str,
        agent_s: float,
        check_s: float,
        check: Check,
        note: str = "",
    ) -> None:
        """Record a checked stage; ``note`` says how the model's work on it ended."""
        error = f"{check.error} ({note})" if check.error and note else check.error
        log = self.write_log(f"{stage}.log", (f"[{note}]\n" if note else "") + check.log)
        self.stages[stage] = _stage(
            stage,
            "passed" if check.passed else "failed",
            started_at=started_at,
            duration_s=round(agent_s + check_s, 3),
            agent_s=round(agent_s, 3),
            check_s=round(check_s, 3),
            error=error,
            log=log,
        )
        if not check.passed and self.failed is None:
            self.failed = stage

    def run_stages(
        self, loop: AgentLoop, checks: StageChecks, texts: ReproductionTexts, steps: StepLog
    ) -> None:
        for stage in AGENT_STAGES:
            if self.failed is not None:
                break
            started_at, started = utc_now(), time.monotonic()
            if self.exhausted is None:
                guard = plan_guard if stage == "plan" else None
                end = loop.run_stage(stage, stage_instructions(stage, self.task, texts), guard)
                self.exhausted = end.limit
                note = _ENDINGS[end.reason].format(limit=end.limit)
            else:
                note = f"the budget ran out before this stage: {self.exhausted}"
            agent_s = time.monotonic() - started
            checked = time.monotonic()
            if stage == "plan":
                check, self.plan = checks.plan()
                self.write_log("plan.md", self.plan)
            elif stage == "env_setup":
                check = checks.env()
            elif stage == "code_impl":
                check = checks.code()
            else:
                check = self.run_again(checks)
            check_s = time.monotonic() - checked
            steps.write("stage_check", stage=stage, passed=check.passed, error=check.error)
            self.record_stage(stage, started_at, agent_s, check_s, check, note)

    def run_again(self, checks: StageChecks) -> Check:
        """train_debug's check: the harness's own reruns of the submitted files, with
        seeds the agent never saw; what the agent's own run left is kept apart."""
        self.own_results = checks.own_results()
        if self.own_results is not None:
            self.write_log("own-results.json", json.dumps(self.own_results, indent=1))
        self.keep_files(checks)
        assert self.files is not None
        seeds = draw_seeds(self.settings.reruns)
        self.rerun = run_again(
            self.setting.backend, self.task, self.setting.wheelhouse, self.files, seeds
        )
        if not self.rerun.check.passed:
            return self.rerun.check
        self.results = merged_results(self.rerun.runs)
        computed = read_splits(self.task, self.rerun.read)
        if computed:  # rcb's own hashes of what was read, never the agent's
            self.results["splits"] = computed
        self.write_log(RESULTS, json.dumps(self.results, indent=1))
        return self.rerun.check

    def check_results(self, steps: StepLog) -> None:
        if self.failed is not None or self.results is None or self.rerun is None:
            return
        started_at, started = utc_now(), time.monotonic()
        assert self.task.expected is not None and self.files is not None
        code = "\n".join(t for p, t in sorted(self.files.items()) if p not in _NOT_CODE)
        self.grade = grade_results(self.results, self.task.expected, self.settings, code)
        self.grade.review_reasons += rerun_flags(
            self.rerun,
            self.task.expected,
            self.files,
            self.own_results,
            self.setting.gold_run_s.get(self.task.id),
        )
        self.grade.review_reasons += data_flags(self.rerun, self.task)
        lines = [
            f"{m.name}: reproduced {m.mean if m.mean is not None else '-'} "
            f"(runs {m.reproduced}); published {m.published_mean} +- 2 x {m.published_std} "
            f"-> {'in range' if m.in_range else 'OUT OF RANGE'}"
            + (f"; relative error {m.relative_error:.3%}" if m.relative_error is not None else "")
            + (f"; {m.error}" if m.error else "")
            for m in self.grade.metrics.values()
        ]
        lines += [
            f"curve {c.curve} ({c.kind}): {'ok' if c.passed else 'FAILS'}: {c.detail}"
            for c in self.grade.curves
        ]
        self.result_lines = lines
        lines = [*lines, *(f"needs review: {reason}" for reason in self.grade.review_reasons)]
        check = Check(self.grade.passed, self.grade.error(), "\n".join(lines) + "\n")
        steps.write("stage_check", stage="result_check", passed=check.passed, error=check.error)
        self.record_stage("result_check", started_at, 0.0, time.monotonic() - started, check)

    def grade_summary(self) -> str | None:
        """The reruns' results as the result check reported them, for the judge; None
        when the harness never got results to show."""
        if self.grade is None:
            return None
        return "\n".join(self.result_lines)

    def keep_files(self, checks: StageChecks) -> None:
        if self.files is not None:
            return
        self.files = checks.files()
        root = (self.log_dir / "workspace").resolve()
        for path, text in self.files.items():
            target = (root / path).resolve()
            if target.is_relative_to(root):
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")

    def judge(self, texts: ReproductionTexts) -> tuple[JudgeRecord | None, dict[str, float | None]]:
        judge = self.setting.judge
        if judge is None:
            return None, {}
        if self.failed == "plan":
            # No plan, no code: nothing to grade, and nothing that could pass.
            return None, {"plan": 0.0, "method_accuracy": 0.0, "experiment_design": 0.0}
        files = self.files or {}
        code = {p: t for p, t in files.items() if p not in _NOT_CODE}
        results = self.grade_summary()
        prompt = judge_prompt(
            self.task, texts, self.plan, code, results, files.get(CONCLUSIONS_FILE)
        )
        record = run_judge(
            judge,
            self.task,
            self.sample,
            prompt,
            self.log_dir,
            self.setting.out,
            conclusions=results is not None,
        )
        return record, judge_scores(record.items) if record.items else {}

    def finish(self, steps: StepLog, loop: AgentLoop | None, **fields: Any) -> ReproductionRecord:
        for stage in STAGES:
            if stage not in self.stages:
                cause = f"not run: {self.failed} failed" if self.failed else "not run"
                self.stages[stage] = _stage(stage, "not_run", error=cause)
        steps.write(
            "attempt_end", failed_stage=self.failed, **(loop.usage.summary() if loop else {})
        )
        return ReproductionRecord(
            task=self.task.id,
            model=self.agent.name,
            sample=self.sample,
            task_sha=self.task.sha,
            published=self.task.config.published,
            domain=self.task.config.domain,
            target_source=self.task.expected.source if self.task.expected else "",
            failed_stage=self.failed,
            stages={s: self.stages[s] for s in STAGES},
            usage=loop.usage.summary() if loop else {},
            budget=self.settings.budget.model_dump(),
            budget_exhausted=self.exhausted,
            log_dir=self.log_rel.as_posix(),
            created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            rcb_version=__version__,
            **fields,
        )


def dimensions_of(
    stages: dict[str, StageRecord], scores: dict[str, float | None], threshold: float
) -> dict[str, bool]:
    """The five dimensions as pass or fail; the judged two only when graded."""

    def passed(stage: str) -> bool:
        return stages[stage].success if stage in stages else False

    dimensions = {
        "env_setup": passed("env_setup"),
        "code_runnability": passed("code_impl") and passed("train_debug"),
        "result_consistency": passed("result_check"),
    }
    for name in JUDGED_DIMENSIONS:
        score = scores.get(name)
        if score is not None:
            dimensions[name] = score >= threshold
    # A design whose conclusions the results do not support is not a sound experiment.
    concluded = scores.get(CONCLUSIONS_ID)
    if concluded is not None and "experiment_design" in dimensions:
        dimensions["experiment_design"] = dimensions["experiment_design"] and concluded >= threshold
    return {name: dimensions[name] for name in DIMENSIONS if name in dimensions}


def run_attempt(
    task: Task, agent: AgentModel, sample: int, setting: AttemptSetting, log_rel: Path
) -> ReproductionRecord:
    """Run and grade one attempt; never raises for the model's or a sandbox's fault.

    Raises:
        RcbError: a problem the user must fix (a rejected API key, no sandbox here).
        KeyboardInterrupt: Ctrl-C; the sandbox is gone and nothing is recorded.
    """
    attempt = _Attempt(task, agent, sample, setting, log_rel)
    attempt.log_dir.mkdir(parents=True, exist_ok=True)
    steps = StepLog(attempt.log_dir / "steps.jsonl")
    settings = attempt.settings
    budget = settings.budget
    loop: AgentLoop | None = None
    sandbox = None
    steps.write("attempt_start", task=task.id, model=agent.name, sample=sample, task_sha=task.sha)
    try:
        texts = reproduction_texts(
            task, need_paper=agent.calls_provider or setting.judge is not None
        )
        sandbox = setting.backend.open_clean(
            task, mounts={str(setting.wheelhouse): WHEELHOUSE_MOUNT}, env=sandbox_pip_env()
        )
        checks = StageChecks(sandbox, task)
        checks.prepare(texts)
        workbench = Workbench(
            sandbox,
            WORKDIR,
            time_left=lambda: loop.time_left() if loop else float(budget.wall_time_s),
            max_timeout_s=float(settings.run_timeout_s + 60),
        )
        loop = AgentLoop(
            agent.start(task, sample),
            workbench,
            Budget(budget.turns, budget.tokens, budget.wall_time_s, budget.cost_usd),
            steps,
            system_prompt(task, setting.packages, budget.model_dump()),
        )
        attempt.run_stages(loop, checks, texts, steps)
        attempt.keep_files(checks)
        attempt.check_results(steps)
        judge, scores = attempt.judge(texts)
        if judge is not None:
            steps.write("judge", model=judge.model, error=judge.error, scores=scores)
        grade = attempt.grade
        record = attempt.finish(
            steps,
            loop,
            status="scored",
            scores=scores,
            judge=judge,
            metrics=grade.metrics if grade else {},
            curves=grade.curves if grade else [],
            needs_review=grade.needs_review if grade else False,
            review_reasons=grade.review_reasons if grade else [],
            reruns=attempt.rerun.summary() if attempt.rerun else [],
            paper_sha=texts.paper_sha,
        )
        threshold = task.rubric.pass_threshold if task.rubric else 1.0
        record.dimensions = dimensions_of(record.stages, scores, threshold)
        return record
    except (RcbError, KeyboardInterrupt):
        steps.write("attempt_aborted")
        raise
    except ModelCallError as exc:
        return attempt.finish(steps, loop, status="harness_error", message=str(exc)[:500])
    except Exception as exc:  # infrastructure (a sandbox that broke): reported apart
        message = f"{type(exc).__name__}: {exc}"[:500]
        return attempt.finish(steps, loop, status="harness_error", message=message)
    finally:
        if sandbox is not None:
            setting.backend.release(sandbox)
        steps.close()
