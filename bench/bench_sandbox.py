"""Sandbox speed, measured side by side in one run.

For a test that takes at least 1 s bare, runs it N times:
  - bare: the pytest command in the task's venv, no sandbox;
  - local: through rcb's local backend (bubblewrap when present)   (goal: <= 1.3x);
  - docker: through the Docker backend with a warm container       (goal: <= 1.5x,
    fixed overhead per snippet <= 0.3 s).
Then checks caching: building the venv and the image again builds nothing.

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

from rcb_action.sandbox import build_venv, get_backend
from rcb_action.scoring import run_tests, task_files
from rcb_action.tasks import load_task

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "tasks" / "toy"


def make_task(scratch: Path) -> Path:
    """A copy of the toy fixture whose selected test sleeps about a second."""
    tasks = scratch / "tasks"
    shutil.copytree(FIXTURE.parent, tasks)
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
    return tasks / "toy"


def bare(task, runs: int, workdir: Path) -> float:
    for rel, data in task_files(task).items():
        path = workdir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    python = build_venv(task.env_dir) / "bin" / "python"
    argv = [
        str(python),
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        *task.tests_for("slow sum"),
    ]
    env = {"PYTHONPATH": f"{workdir}/src:{workdir}", "PATH": "/usr/bin:/bin"}
    started = time.perf_counter()
    for _ in range(runs):
        subprocess.run(argv, cwd=workdir, env=env, capture_output=True, check=True)
    return (time.perf_counter() - started) / runs


def sandboxed(task, runs: int, backend_name: str) -> float:
    backend = get_backend(backend_name)
    try:
        sandbox = backend.open(task)
        selection = task.tests_for("slow sum")
        first = run_tests(sandbox, task, selection)  # warm: the reference run defines the ids
        assert first.passed, first.message
        ids = sorted(first.outcomes)
        started = time.perf_counter()
        for _ in range(runs):
            result = run_tests(sandbox, task, selection, expected=ids)
            assert result.passed, result.message
        return (time.perf_counter() - started) / runs
    finally:
        backend.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-docker", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="rcb-bench-sandbox-"))
    try:
        task = load_task(make_task(scratch))
        base = bare(task, args.runs, scratch / "bare")
        local = sandboxed(task, args.runs, "local")
        print(f"bare pytest:      {base:6.3f} s a snippet")
        print(f"local sandbox:    {local:6.3f} s a snippet, {local / base:5.2f}x (goal <= 1.30x)")
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
            docker = sandboxed(task, args.runs, "docker")
            print(
                f"docker, warm:     {docker:6.3f} s a snippet, {docker / base:5.2f}x (goal <= 1.50x), "
                f"fixed overhead {docker - base:+.3f} s (goal <= 0.30 s)"
            )
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
