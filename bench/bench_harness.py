"""Harness speed, measured side by side in one run (these machines are noisy).

Prints three ratios:
  1. per-snippet harness overhead: `rcb evaluate --model reference` (local sandbox,
     bubblewrap when present, one worker) against the same commands run bare on the
     same snippets: for a task with cases and checks, the case runner then pytest over
     the checks (two processes, as the harness runs them); for an in-process task, one
     pytest (goal: at most 1.5x with cases and checks, 1.3x in-process). It also says
     where the time goes: running the cases, running the checks, and the rest (the
     sandbox, files in and out, the reference run);
  2. `--workers 2` against `--workers 1` on the reference run of every task
     (goal: at most 0.65x on 2 cores);
  3. a rerun with nothing changed: model calls, test runs and seconds (goal: none, under 5 s).

Usage: python bench/bench_harness.py [--tasks GLOB]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import ClassVar

import rcb_action.models._builtin as builtin_models
import rcb_action.sandbox._phases as phases
import rcb_action.scoring._attempt as attempt_module
import rcb_action.scoring._run as run_module
from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, evaluate
from rcb_action.sandbox import build_venv
from rcb_action.scoring import plugin_source, task_files
from rcb_action.tasks import INPUTS_DIR, load_tasks, resolve_tasks_dir


def bare(tasks: list, workdir: Path) -> float:
    """The commands the harness runs, without rcb around them, once per snippet."""
    commands: list[tuple[list[str], Path, dict[str, str]]] = []
    for task in tasks:
        root = workdir / task.id
        files = task_files(task)
        files[".rcb/rcb_cases.py"] = plugin_source("rcb_cases")
        files[".rcb/rcb_checks.py"] = plugin_source("rcb_checks")
        for rel, data in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        python = str(build_venv(task.env_dir) / "bin" / "python")
        pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        env = {
            "PYTHONPATH": f"{root}/.rcb:{root}/src:{root}/{INPUTS_DIR}:{root}",
            "PATH": "/usr/bin:/bin",
            "OMP_NUM_THREADS": "1",
            "RCB_CANDIDATE_DIR": f"{root}/out",
            "RCB_REFERENCE_DIR": f"{root}/out",
        }
        (root / "out").mkdir(exist_ok=True)
        for name in task.snippet_names():
            if task.grading == "cases":
                cases = [python, "-m", "rcb_cases", f"{root}/out", "--cases", f"{root}/cases"]
                commands.append((cases, root, env))
                commands.append(([*pytest, "-p", "rcb_checks", *task.tests_for(name)], root, env))
            else:
                commands.append(([*pytest, *task.tests_for(name)], root, env))
    started = time.perf_counter()
    for argv, root, env in commands:
        subprocess.run(argv, cwd=root, env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def harness(pattern: str | None, workers: int, out: Path) -> float:
    config = EvalConfig(
        models=["reference"], out=out, tasks=pattern, workers=workers, progress=False
    )
    started = time.perf_counter()
    evaluate(config)
    return time.perf_counter() - started


class Counts:
    """Model calls and sandbox runs made in this process, counted where they happen, and
    the seconds the sandboxed programs themselves took (cases, checks or tests)."""

    model_calls = 0
    test_runs = 0
    seconds: ClassVar[dict[str, float]] = {"cases": 0.0, "pytest": 0.0}


def count_calls() -> None:
    def counted(run, kind):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            Counts.test_runs += 1
            raw = run(*args, **kwargs)
            Counts.seconds[kind] += raw.result.duration_s
            return raw

        return wrapper

    for module in (attempt_module, run_module):
        module.run_pytest = counted(phases.run_pytest, "pytest")
    attempt_module.run_cases = counted(phases.run_cases, "cases")
    complete = builtin_models.ReferenceModel.complete

    def counted_complete(self, request):  # type: ignore[no-untyped-def]
        Counts.model_calls += 1
        return complete(self, request)

    builtin_models.ReferenceModel.complete = counted_complete  # type: ignore[method-assign]


def main() -> None:
    # Two cores, as the goal says, however many this machine has (children inherit it).
    if hasattr(os, "sched_setaffinity") and len(os.sched_getaffinity(0)) > 2:
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])
    count_calls()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=None, help="task id glob (default: all)")
    args = parser.parse_args()
    tasks = [t for t in load_tasks(resolve_tasks_dir(), args.tasks) if t.config.kind == "snippet"]
    snippets = sum(len(t.snippets) for t in tasks)
    scratch = Path(tempfile.mkdtemp(prefix="rcb-bench-"))
    phases_one = {"cases": 0.0, "pytest": 0.0}
    two_phase = sum(1 for t in tasks if t.grading == "cases")
    bare_s = one = two = 0.0
    try:
        harness(args.tasks, 1, scratch / "warm")  # builds venvs, records reference test ids
        Counts.seconds = {"cases": 0.0, "pytest": 0.0}
        # Side by side in the order A B C C B A, so a drift in the machine's load
        # (these machines are shared) weighs on all three alike.
        for round_ in ("first", "second"):
            steps = [("bare", None), ("one", 1), ("two", 2)]
            for kind, workers in steps if round_ == "first" else reversed(steps):
                out = scratch / f"{kind}-{round_}"
                if workers is None:
                    bare_s += bare(tasks, out)
                elif workers == 1:
                    before_phases = dict(Counts.seconds)
                    one += harness(args.tasks, 1, out)
                    for kind in phases_one:
                        phases_one[kind] += Counts.seconds[kind] - before_phases[kind]
                else:
                    two += harness(args.tasks, 2, out)
        out = scratch / "one-first"
        before = len(ResultStore(out).records())
        calls, runs = Counts.model_calls, Counts.test_runs
        started = time.perf_counter()
        evaluate(
            EvalConfig(models=["reference"], out=out, tasks=args.tasks, workers=1, progress=False)
        )
        rerun = time.perf_counter() - started
        after = len(ResultStore(out).records())
        calls, runs = Counts.model_calls - calls, Counts.test_runs - runs
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    goal = "1.50x with cases and checks" if two_phase else "1.30x in-process"
    print(f"{len(tasks)} tasks ({two_phase} with cases and checks), {snippets} snippets")
    print(
        f"bare commands:            {bare_s:7.2f} s ({bare_s / snippets * 1000:.0f} ms a snippet)"
    )
    print(f"rcb evaluate, 1 worker:   {one:7.2f} s ({one / snippets * 1000:.0f} ms a snippet)")
    print(f"harness overhead ratio:   {one / bare_s:7.2f}x  (goal <= {goal})")
    rest = one - phases_one["cases"] - phases_one["pytest"]
    print(
        f"where the time goes:      cases {phases_one['cases']:.2f} s, checks/tests "
        f"{phases_one['pytest']:.2f} s (inside the sandbox, start-up included), "
        f"the rest {rest:.2f} s (files in and out, sandbox set-up, planning, records)"
    )
    print(f"rcb evaluate, 2 workers:  {two:7.2f} s")
    print(f"workers 2 / workers 1:    {two / one:7.2f}x  (goal <= 0.65x)")
    print(
        f"rerun, nothing changed:   {rerun:7.2f} s, {calls} model calls, {runs} test runs, "
        f"{after - before} new records (goal: none of them, < 5 s)"
    )
    print(
        f"counted in this bench:    {Counts.model_calls} model calls, {Counts.test_runs} test runs "
        f"in all; cores used: {len(os.sched_getaffinity(0))}"
    )


if __name__ == "__main__":
    main()
