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
  3. a rerun with nothing changed: model calls, test runs and seconds (goal: none, under 5 s);
  4. with --researchcodebench CHECKOUT: its papers imported with `rcb import rcb`, the
     reference run of those whose environment is the base one (torch, numpy, scipy, pytest:
     "torch-only") with `--workers 2`, against a sequential bare loop of the same tests as
     ResearchCodeBench's own harness runs them, one `python paper2code_test.py` per
     snippet (goal: at most 0.7x on 2 cores).

Usage: python bench/bench_harness.py [--tasks GLOB | --torch] [--researchcodebench CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
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
from rcb_action.importers import import_researchcodebench
from rcb_action.results import ResultStore
from rcb_action.runner import EvalConfig, evaluate
from rcb_action.sandbox import build_venv
from rcb_action.scoring import plugin_source, task_files
from rcb_action.tasks import INPUTS_DIR, load_tasks, resolve_tasks_dir

# The thread limits the sandbox sets, so both sides compute the same way on 2 cores.
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def lay_out(task, root: Path) -> tuple[str, dict[str, str]]:  # type: ignore[no-untyped-def]
    """Write ``task``'s files and the case and check plugins under ``root``; return the
    environment's python and the variables the sandbox sets."""
    files = task_files(task)
    files[".rcb/rcb_cases.py"] = plugin_source("rcb_cases")
    files[".rcb/rcb_checks.py"] = plugin_source("rcb_checks")
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (root / "out").mkdir(exist_ok=True)
    python = str(build_venv(task.env_dir) / "bin" / "python")
    env = {
        "PYTHONPATH": f"{root}/.rcb:{root}/src:{root}/{INPUTS_DIR}:{root}",
        "PATH": "/usr/bin:/bin",
        **THREADS,
        "RCB_CANDIDATE_DIR": f"{root}/out",
        "RCB_REFERENCE_DIR": f"{root}/out",
    }
    return python, env


PYTEST_ARGS = ["-q", "-p", "no:cacheprovider"]


def bare(tasks: list, workdir: Path) -> float:
    """The commands the harness runs, without rcb around them, once per snippet."""
    commands: list[tuple[list[str], Path, dict[str, str]]] = []
    for task in tasks:
        root = workdir / task.id
        python, env = lay_out(task, root)
        pytest = [python, "-m", "pytest", *PYTEST_ARGS]
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


# Runs under a task's python: imports the heavy modules once, then runs each check
# command of stdin's JSON list in a child forked from it; prints the seconds taken.
PRELOADED = """
import json, os, sys, time
import numpy, pytest, torch
jobs = json.load(sys.stdin)
started = time.perf_counter()
for args, cwd, env in jobs:
    pid = os.fork()
    if pid == 0:
        os.chdir(cwd)
        os.environ.update(env)
        sys.path[:0] = env["PYTHONPATH"].split(":")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os._exit(int(pytest.main(args)))
    os.waitpid(pid, 0)
print(time.perf_counter() - started)
"""


def preload(tasks: list, workdir: Path) -> tuple[float, float, int]:
    """What a preloaded interpreter would save on the checks (the sandbox that runs no
    model code): each snippet's checks in a fresh interpreter, one after another, against
    the same runs in children forked from one interpreter that imported torch, numpy and
    pytest once. Returns (fresh seconds, forked seconds, snippets)."""
    jobs: dict[str, list[tuple[list[str], str, dict[str, str]]]] = {}
    for task in tasks:
        if task.grading != "cases":
            continue
        root = workdir / task.id
        python, env = lay_out(task, root)
        cases = [python, "-m", "rcb_cases", f"{root}/out", "--cases", f"{root}/cases"]
        subprocess.run(cases, cwd=root, env=env, capture_output=True, check=False)
        for name in task.snippet_names():
            args = [*PYTEST_ARGS, "-p", "rcb_checks", *task.tests_for(name)]
            jobs.setdefault(python, []).append((args, str(root), env))
    fresh = forked = 0.0
    for round_ in ("first", "second"):  # A B B A
        for kind in ("fresh", "forked") if round_ == "first" else ("forked", "fresh"):
            for python, runs in jobs.items():
                if kind == "forked":
                    done = subprocess.run(
                        [python, "-c", PRELOADED],
                        input=json.dumps(runs),
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    forked += float(done.stdout.split()[-1])
                    continue
                started = time.perf_counter()
                for args, cwd, env in runs:
                    argv = [python, "-m", "pytest", *args]
                    subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
                fresh += time.perf_counter() - started
    return fresh, forked, sum(len(runs) for runs in jobs.values())


def harness(pattern: str | None, workers: int, out: Path, tasks_dir: Path | None = None) -> float:
    config = EvalConfig(
        models=["reference"],
        out=out,
        tasks=pattern,
        tasks_dir=tasks_dir,
        workers=workers,
        progress=False,
    )
    started = time.perf_counter()
    evaluate(config)
    return time.perf_counter() - started


RCB_BASE_ENV = "researchcodebench"


def researchcodebench(checkout: Path, scratch: Path) -> tuple[str, float, float]:
    """ResearchCodeBench's torch-only papers: the reference run under rcb with two
    workers against its own harness's way, one ``python paper2code_test.py`` per
    snippet in sequence. Returns (what was run, bare seconds, rcb seconds)."""
    tasks_dir = scratch / "rcb-tasks"
    imported = import_researchcodebench(checkout, tasks_dir, env=RCB_BASE_ENV)
    tasks = [
        t
        for t in load_tasks(tasks_dir, ",".join(i.task_dir.name for i in imported if i.task_dir))
        if t.config.env == RCB_BASE_ENV
    ]
    pattern = ",".join(t.id for t in tasks)
    snippets = sum(len(t.snippets) for t in tasks)
    harness(pattern, 2, scratch / "rcb-warm", tasks_dir)  # builds the environment

    def bare_loop(round_: str) -> float:
        commands: list[tuple[list[str], Path]] = []
        for task in tasks:
            root = scratch / f"rcb-bare-{round_}" / task.id
            shutil.copytree(task.root, root)
            python = str(build_venv(task.env_dir) / "bin" / "python")
            commands += [([python, "paper2code_test.py"], root) for _ in task.snippets]
        env = {"PATH": "/usr/bin:/bin", **THREADS}
        started = time.perf_counter()
        for argv, root in commands:
            subprocess.run(argv, cwd=root, env=env, capture_output=True, check=False)
        return time.perf_counter() - started

    bare_s = rcb_s = 0.0
    for round_ in ("first", "second"):  # A B B A
        if round_ == "first":
            bare_s += bare_loop(round_)
        rcb_s += harness(pattern, 2, scratch / f"rcb-two-{round_}", tasks_dir)
        if round_ == "second":
            bare_s += bare_loop(round_)
    return f"{len(tasks)} papers ({pattern}), {snippets} snippets", bare_s, rcb_s


def uses_torch(env_dir: Path) -> bool:
    requirements = env_dir / "requirements.txt"
    return requirements.is_file() and any(
        line.split("==")[0].strip().lower() == "torch"
        for line in requirements.read_text(encoding="utf-8").splitlines()
    )


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
    parser.add_argument(
        "--torch", action="store_true", help="only the tasks whose environment installs torch"
    )
    parser.add_argument(
        "--researchcodebench",
        type=Path,
        metavar="CHECKOUT",
        help="also time ResearchCodeBench's torch-only papers (ratio 4)",
    )
    args = parser.parse_args()
    tasks = [t for t in load_tasks(resolve_tasks_dir(), args.tasks) if t.config.kind == "snippet"]
    if args.torch:
        tasks = [t for t in tasks if uses_torch(t.env_dir)]
        args.tasks = ",".join(t.id for t in tasks)
    snippets = sum(len(t.snippets) for t in tasks)
    scratch = Path(tempfile.mkdtemp(prefix="rcb-bench-"))
    phases_one = {"cases": 0.0, "pytest": 0.0}
    two_phase = sum(1 for t in tasks if t.grading == "cases")
    bare_s = one = two = 0.0
    rcb_line: tuple[str, float, float] | None = None
    saving: tuple[float, float, int] | None = None
    try:
        if args.torch:
            saving = preload(tasks, scratch / "preload")
        if args.researchcodebench:
            rcb_line = researchcodebench(args.researchcodebench, scratch)
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
        f"bare commands:            {bare_s:7.2f} s ({bare_s / (2 * snippets) * 1000:.0f} ms a snippet)"
    )
    print(
        f"rcb evaluate, 1 worker:   {one:7.2f} s ({one / (2 * snippets) * 1000:.0f} ms a snippet)"
    )
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
    if saving:
        fresh, forked, runs = saving
        print(
            f"checks, fresh interpreter: {fresh / (2 * runs) * 1000:.0f} ms a snippet; forked from "
            f"one that imported torch: {forked / (2 * runs) * 1000:.0f} ms "
            f"(a preloaded checks interpreter would save {(fresh - forked) / (2 * runs) * 1000:.0f} ms "
            f"of the {one / (2 * snippets) * 1000:.0f} ms an attempt takes)"
        )
    if rcb_line:
        what, rcb_bare, rcb_two = rcb_line
        print(f"ResearchCodeBench:        {what}")
        print(
            f"  its harness's loop:     {rcb_bare:7.2f} s (one python paper2code_test.py a snippet)"
        )
        print(f"  rcb evaluate, 2 workers:{rcb_two:7.2f} s")
        print(f"  rcb / its loop:         {rcb_two / rcb_bare:7.2f}x  (goal <= 0.70x)")
    print(
        f"counted in this bench:    {Counts.model_calls} model calls, {Counts.test_runs} test runs "
        f"in all; cores used: {len(os.sched_getaffinity(0))}"
    )


if __name__ == "__main__":
    main()
