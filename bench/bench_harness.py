"""Harness speed, measured side by side in one run (these machines are noisy).

Prints three ratios:
  1. per-snippet harness overhead: `rcb evaluate --model reference` (local sandbox,
     bubblewrap when present, one worker) against the same pytest commands run bare
     on the same snippets (goal: at most 1.3x);
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

import rcb_action.models._builtin as builtin_models
import rcb_action.runner._expected as expected_module
import rcb_action.runner._score as score_module
from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, evaluate
from rcb_action.sandbox import build_venv
from rcb_action.scoring import task_files
from rcb_action.tasks import load_tasks, resolve_tasks_dir


def bare_pytest(tasks: list, workdir: Path) -> float:
    """The pytest command the harness runs, without rcb around it, once per snippet."""
    commands = []
    for task in tasks:
        root = workdir / task.id
        for rel, data in task_files(task).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        python = build_venv(task.env_dir) / "bin" / "python"
        for name in task.snippet_names():
            argv = [
                str(python),
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                *task.tests_for(name),
            ]
            commands.append((argv, root))
    started = time.perf_counter()
    for argv, root in commands:
        env = {"PYTHONPATH": f"{root}/src:{root}", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
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
    """Model calls and test runs made in this process, counted where they happen."""

    model_calls = 0
    test_runs = 0


def count_calls() -> None:
    def counted_tests(run):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            Counts.test_runs += 1
            return run(*args, **kwargs)

        return wrapper

    score_module.run_tests = counted_tests(score_module.run_tests)
    expected_module.run_tests = counted_tests(expected_module.run_tests)
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
    bare = one = two = 0.0
    try:
        harness(args.tasks, 1, scratch / "warm")  # builds venvs, records reference test ids
        # Side by side in the order A B C C B A, so a drift in the machine's load
        # (these machines are shared) weighs on all three alike.
        for round_ in ("first", "second"):
            steps = [("bare", None), ("one", 1), ("two", 2)]
            for kind, workers in steps if round_ == "first" else reversed(steps):
                out = scratch / f"{kind}-{round_}"
                if workers is None:
                    bare += bare_pytest(tasks, out)
                elif workers == 1:
                    one += harness(args.tasks, 1, out)
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
    print(f"{len(tasks)} tasks, {snippets} snippets")
    print(f"bare pytest:              {bare:7.2f} s ({bare / snippets * 1000:.0f} ms a snippet)")
    print(f"rcb evaluate, 1 worker:   {one:7.2f} s ({one / snippets * 1000:.0f} ms a snippet)")
    print(f"harness overhead ratio:   {one / bare:7.2f}x  (goal <= 1.30x)")
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
