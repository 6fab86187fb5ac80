"""Sandbox speed, measured side by side in one run.

For a snippet whose grading takes about 1 s bare, grades it N times, both ways:

cases and checks (two phases: the cases with the code under test, then the checks
in a sandbox of their own):
  - bare: the case runner, then pytest over the checks, in the task's venv, no sandbox;
  - local: rcb's local backend (bubblewrap when present)          (goal: <= 1.5x);
  - docker: the Docker backend with warm containers               (goal: <= 1.7x);
in-process (one pytest with the code under test, the old format):
  - bare, local (goal: <= 1.3x), docker warm (goal: <= 1.5x, fixed overhead <= 0.3 s).
For each it says where the time goes: the sandboxed programs themselves, and the
rest (files in and out, sandbox start). Then checks caching: building the venv and
the image again builds nothing.

Usage: RCB_BASE_IMAGE=rcb-base:bookworm python bench/bench_sandbox.py [--runs N] [--no-docker]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import rcb_action.scoring._attempt as attempt_module
import rcb_action.scoring._run as run_module
from rcb_action.sandbox import build_venv, get_backend, run_cases, run_pytest
from rcb_action.scoring import (
    open_sandboxes,
    plugin_source,
    reference_run,
    release_sandboxes,
    score_snippet,
    task_files,
)
from rcb_action.tasks import load_task

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "tasks"
SNIPPET = "slow sum"


class Inside:
    """Seconds the sandboxed programs themselves took, summed over the timed runs."""

    seconds = 0.0


def _timed(run):  # type: ignore[no-untyped-def]
    def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
        raw = run(*args, **kwargs)
        Inside.seconds += raw.result.duration_s
        return raw

    return wrapper


attempt_module.run_cases = _timed(run_cases)
attempt_module.run_pytest = _timed(run_pytest)
run_module.run_pytest = _timed(run_pytest)


def make_tasks(scratch: Path) -> tuple[Path, Path]:
    """Copies of the toy fixtures whose slow-sum grading takes about a second: in the
    in-process one its test sleeps, in the cases-and-checks one its case does."""
    tasks = scratch / "tasks"
    shutil.copytree(FIXTURES, tasks)
    cases = tasks / "casetoy" / "cases" / "cases_toy.py"
    cases.write_text(
        cases.read_text().replace(
            "def case_slow_sum():\n",
            "def case_slow_sum():\n    import time\n\n    time.sleep(1.0)\n",
        )
    )
    test = tasks / "toy" / "tests" / "test_toy.py"
    test.write_text(
        test.read_text()
        + textwrap.dedent(
            """

            def test_one_second():
                import time

                time.sleep(1.0)
                assert slow_sum([1, 2]) == 3
            """
        )
    )
    yaml = tasks / "toy" / "task.yaml"
    yaml.write_text(
        yaml.read_text().replace(
            'tests: ["tests/test_toy.py::test_slow_sum"]',
            'tests: ["tests/test_toy.py::test_one_second"]',
        )
    )
    return tasks / "toy", tasks / "casetoy"


def bare(task, runs: int, workdir: Path) -> float:
    """The commands the harness runs for one snippet, without rcb around them."""
    files = task_files(task)
    files[".rcb/rcb_cases.py"] = plugin_source("rcb_cases")
    files[".rcb/rcb_checks.py"] = plugin_source("rcb_checks")
    for rel, data in files.items():
        path = workdir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (workdir / "out").mkdir()
    python = str(build_venv(task.env_dir) / "bin" / "python")
    pytest = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if task.grading == "cases":
        commands = [
            [python, "-m", "rcb_cases", f"{workdir}/out", "--cases", f"{workdir}/cases"],
            [*pytest, "-p", "rcb_checks", *task.tests_for(SNIPPET)],
        ]
    else:
        commands = [[*pytest, *task.tests_for(SNIPPET)]]
    env = {
        "PYTHONPATH": f"{workdir}/.rcb:{workdir}/src:{workdir}",
        "PATH": "/usr/bin:/bin",
        "RCB_CANDIDATE_DIR": f"{workdir}/out",
        "RCB_REFERENCE_DIR": f"{workdir}/out",
    }
    started = time.perf_counter()
    for _ in range(runs):
        for argv in commands:
            subprocess.run(argv, cwd=workdir, env=env, capture_output=True, check=True)
    return (time.perf_counter() - started) / runs


def sandboxed(task, runs: int, backend_name: str) -> tuple[float, float]:
    """Seconds a snippet, and of those the seconds inside the sandboxed programs."""
    backend = get_backend(backend_name)
    sandboxes = open_sandboxes(backend, task)
    try:
        expected = reference_run(task, sandboxes)  # warm: defines the ids and outputs
        code = "".join(task.reference_body(SNIPPET))
        Inside.seconds = 0.0
        started = time.perf_counter()
        for _ in range(runs):
            run = score_snippet(sandboxes, task, SNIPPET, code, expected).run
            assert run.passed, run.message
        return (time.perf_counter() - started) / runs, Inside.seconds / runs
    finally:
        release_sandboxes(backend, sandboxes)
        backend.close()


def report(label: str, seconds: float, inside: float, base: float, goal: float) -> None:
    print(
        f"{label:<22}{seconds:6.3f} s a snippet, {seconds / base:5.2f}x (goal <= {goal:.2f}x), "
        f"fixed overhead {seconds - base:+.3f} s; inside the sandbox {inside:.3f} s, "
        f"the rest {seconds - inside:.3f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-docker", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rcb-bench-sandbox-"))
    try:
        toy_root, casetoy_root = make_tasks(scratch)
        task = load_task(toy_root)
        for label, graded, goals in (
            ("cases and checks", load_task(casetoy_root), (1.5, 1.7)),
            ("in-process", task, (1.3, 1.5)),
        ):
            base = bare(graded, args.runs, scratch / f"bare-{graded.id}")
            print(f"{label}: bare {base:6.3f} s a snippet")
            report("  local sandbox:", *sandboxed(graded, args.runs, "local"), base, goals[0])
            if not args.no_docker:
                report("  docker, warm:", *sandboxed(graded, args.runs, "docker"), base, goals[1])
        venv = build_venv(task.env_dir)
        stamp = venv.stat().st_mtime_ns, venv.stat().st_ino
        started = time.perf_counter()
        again = build_venv(task.env_dir)
        seconds = time.perf_counter() - started
        same = again == venv and (again.stat().st_mtime_ns, again.stat().st_ino) == stamp
        print(
            f"venv again:       {seconds:6.3f} s ({'cached: nothing built' if same else 'REBUILT'})"
        )
        if not args.no_docker:
            from rcb_action.sandbox._docker import docker_client
            from rcb_action.sandbox._images import ensure_image

            client = docker_client()
            tag = ensure_image(client, task.env_dir)
            image_id = client.images.get(tag).id
            started = time.perf_counter()
            again = ensure_image(client, task.env_dir)
            seconds = time.perf_counter() - started
            same = again == tag and client.images.get(again).id == image_id
            print(
                f"image again:      {seconds:6.3f} s "
                f"({tag} {'cached: nothing built' if same else 'REBUILT'})"
            )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
