"""Workflow planning: the evaluation matrix (models x shards, GPU legs) and what a PR changed.

Sharding is the way to scale: every CPU leg runs ``rcb evaluate --shard I/N``
over the same tasks, the split is by snippet, and ``rcb merge`` of all legs
gives exactly the results of one unsharded run. Tasks that need a GPU
(``gpu: required``) go to one leg per model on the GPU runner, or are left out
with a note when no GPU runner is configured.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rcb_action.errors import RcbError
from rcb_action.github._submissions import SUBMISSIONS_DIR, Submission
from rcb_action.validate import Problem

# GitHub refuses a matrix of more than 256 jobs.
MAX_LEGS = 256
# Folder names safe to hand to a command as one word; rcb validate judges the rest
# (a task id is stricter: lower-case, digits, '_' and '-').
_FOLDER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def split_list(text: str | None) -> list[str]:
    """Items of a list written with commas, spaces or newlines (how Action inputs come)."""
    return [item for item in re.split(r"[,\s]+", text or "") if item]


def parse_runner(label: str) -> str | list[str]:
    """``runs-on`` from a label (``gpu-a100``) or several (``self-hosted, gpu``)."""
    labels = split_list(label)
    if not labels:
        raise RcbError("runner label is empty")
    return labels[0] if len(labels) == 1 else labels


@dataclass(frozen=True)
class Leg:
    """One matrix job: one model on one shard of the CPU tasks, or on the GPU tasks."""

    leg: str
    model: str
    shard: str
    tasks: str
    runner: str | list[str]
    registry: str = ""
    gpu: bool = False

    def as_matrix(self) -> dict[str, Any]:
        return {
            "leg": self.leg,
            "model": self.model,
            "shard": self.shard,
            "tasks": self.tasks,
            "runner": self.runner,
            "registry": self.registry,
            "gpu": self.gpu,
        }


@dataclass
class Plan:
    """The matrix and the notes the run's summary shows (e.g. GPU tasks left out)."""

    legs: list[Leg] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cpu_tasks: list[str] = field(default_factory=list)
    gpu_tasks: list[str] = field(default_factory=list)

    def matrix(self) -> dict[str, Any]:
        return {"include": [leg.as_matrix() for leg in self.legs]}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_")[:60] or "model"


def _leg_name(spec: str) -> str:
    """What a leg is called: the model, or the name a replay file records its results under."""
    if not spec.startswith("replay:"):
        return spec
    path = Path(spec.removeprefix("replay:"))
    try:
        from rcb_action.models import ReplayModel

        return ReplayModel(path).name
    except RcbError:
        return path.stem


def _task_kinds(tasks_dir: Path, pattern: str | None) -> tuple[list[str], list[str]]:
    """(CPU task ids, GPU task ids) of the snippet tasks matching ``pattern``."""
    from rcb_action.tasks import find_tasks, load_task

    cpu: list[str] = []
    gpu: list[str] = []
    for root in find_tasks(tasks_dir, pattern):
        task = load_task(root)
        if task.config.kind != "snippet":
            continue
        (gpu if task.config.gpu == "required" else cpu).append(task.id)
    return cpu, gpu


def plan_evaluation(
    models: Sequence[str],
    *,
    tasks_dir: Path,
    shards: int = 1,
    tasks: str | None = None,
    runner: str = "ubuntu-latest",
    gpu_runner: str | None = None,
    submissions: Iterable[Submission] = (),
) -> Plan:
    """The evaluation matrix: each model (and submission) x each shard of the CPU tasks,
    plus one leg per model on the GPU runner for the tasks that need a GPU.

    Raises:
        RcbError: no models, a bad shard count, no task matching, or too many legs.
        TaskError: a task folder does not load.
    """
    if shards < 1:
        raise RcbError(f"--shards {shards}: give at least 1")
    entries: list[tuple[str, str, str]] = [(m, "", _leg_name(m)) for m in models]
    entries += [(s.spec, s.registry.as_posix(), s.model) for s in submissions]
    if not entries:
        raise RcbError("no models to evaluate: give --models or add submissions")
    cpu, gpu = _task_kinds(tasks_dir, tasks)
    if not cpu and not gpu:
        raise RcbError(f"--tasks {tasks or '*'}: no snippet task matches in {tasks_dir}")
    plan = Plan(cpu_tasks=cpu, gpu_tasks=gpu)
    # With no GPU task in scope the legs keep the caller's filter; otherwise they list
    # the CPU tasks, so that no GPU task runs on a CPU runner.
    cpu_selector = ",".join(cpu) if gpu else (tasks or "")
    for index, (model, registry, label) in enumerate(entries, 1):
        name = f"{index:02d}-{_slug(label)}"
        if cpu:
            for shard in range(1, shards + 1):
                plan.legs.append(
                    Leg(
                        leg=f"{name}-cpu-{shard}of{shards}",
                        model=model,
                        shard=f"{shard}/{shards}" if shards > 1 else "",
                        tasks=cpu_selector,
                        runner=parse_runner(runner),
                        registry=registry,
                    )
                )
        if gpu and gpu_runner:
            plan.legs.append(
                Leg(
                    leg=f"{name}-gpu",
                    model=model,
                    shard="",
                    tasks=",".join(gpu),
                    runner=parse_runner(gpu_runner),
                    registry=registry,
                    gpu=True,
                )
            )
    if gpu and not gpu_runner:
        plan.notes.append(
            f"{len(gpu)} task(s) need a GPU and were skipped: {', '.join(gpu)}. "
            "No GPU runner is configured: set the repository variable RCB_GPU_RUNNER "
            "(or the gpu-runner input) to a runner label to score them."
        )
    if len(plan.legs) > MAX_LEGS:
        raise RcbError(
            f"{len(plan.legs)} matrix jobs: GitHub allows {MAX_LEGS}; use fewer shards or models"
        )
    return plan


@dataclass
class Changes:
    """Task and submission folders a pull request touched (that still exist)."""

    tasks: list[Path] = field(default_factory=list)
    submissions: list[Path] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def changed_files(base: str, head: str = "HEAD", *, cwd: Path | None = None) -> list[str]:
    """Paths changed between the merge base of ``base`` and ``head``, and ``head``.

    Raises:
        RcbError: git failed (e.g. the base commit is not fetched: use fetch-depth 0).
    """
    result = subprocess.run(
        ["git", "diff", "--name-only", "--no-renames", "-z", f"{base}...{head}", "--"],
        cwd=cwd,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RcbError(
            f"git diff {base}...{head} failed: {result.stderr.strip()} "
            "(check out with fetch-depth: 0 so the base commit is present)"
        )
    return [p for p in result.stdout.split("\0") if p]


def _env_of(task_yaml: Path) -> str | None:
    try:
        raw = yaml.safe_load(task_yaml.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    return str(raw.get("env")) if isinstance(raw, dict) and raw.get("env") is not None else None


def classify_changes(
    paths: Iterable[str],
    *,
    root: Path,
    tasks_dir: str = "tasks",
    submissions_dir: str = SUBMISSIONS_DIR,
) -> Changes:
    """Which task and submission folders ``paths`` (relative to ``root``) touch.

    A change to a shared environment (``tasks/_envs/<env>/``) touches every task
    that uses it. Deleted folders are left out; oddly named ones are problems.
    """
    changes = Changes()
    tasks: set[str] = set()
    envs: set[str] = set()
    subs: set[str] = set()
    for path in paths:
        parts = Path(path).parts
        if len(parts) >= 3 and parts[0] == tasks_dir and parts[1] == "_envs":
            envs.add(parts[2])
        elif len(parts) >= 3 and parts[0] == tasks_dir and not parts[1].startswith((".", "_")):
            if _FOLDER.match(parts[1]):
                tasks.add(parts[1])
            else:
                changes.problems.append(
                    Problem(
                        path, None, "task folder names use lower-case letters, digits, '_' and '-'"
                    )
                )
        elif (
            len(parts) >= 3 and parts[0] == submissions_dir and not parts[1].startswith((".", "_"))
        ):
            if _FOLDER.match(parts[1]):
                subs.add(parts[1])
            else:
                changes.problems.append(
                    Problem(
                        path,
                        None,
                        "submission folder names use lower-case letters, digits, '.', '_' and '-'",
                    )
                )
    if envs:
        for yaml_path in sorted((root / tasks_dir).glob("*/task.yaml")):
            if _env_of(yaml_path) in envs and not yaml_path.parent.name.startswith(("_", ".")):
                tasks.add(yaml_path.parent.name)
    changes.tasks = [
        Path(tasks_dir) / t for t in sorted(tasks) if (root / tasks_dir / t / "task.yaml").is_file()
    ]
    changes.submissions = [
        Path(submissions_dir) / s for s in sorted(subs) if (root / submissions_dir / s).is_dir()
    ]
    return changes
