"""Running only the cases a snippet's checks read, against running every case,
measured side by side in one run (these machines are noisy).

For each task with cases and checks, every snippet's reference answer is graded twice
in the same open sandboxes, alternating: once as attempts run now (only the cases its
checks read on the reference's run), once with every case. Both must pass; the script
prints, per task and in total, the seconds of each and their ratio (goal: well under 1
for a task with many cases; about 1 where every check reads every case).

Usage: python bench/bench_cases.py [--tasks GLOB] [--sandbox local|docker]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from rcb_action.sandbox import get_backend
from rcb_action.scoring import (
    open_sandboxes,
    reference_run,
    release_sandboxes,
    score_snippet,
)
from rcb_action.tasks import load_tasks, resolve_tasks_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=None, help="task id glob (default: all)")
    parser.add_argument("--sandbox", default="local", choices=["local", "docker"])
    args = parser.parse_args()
    tasks = [
        t
        for t in load_tasks(resolve_tasks_dir(), args.tasks)
        if t.config.kind == "snippet" and t.grading == "cases"
    ]
    backend = get_backend(args.sandbox)
    totals = [0.0, 0.0]
    print(f"{'task':28} {'snippets':>8} {'selected s':>11} {'all s':>8} {'ratio':>6}")
    for task in tasks:
        sandboxes = open_sandboxes(backend, task)
        try:
            expected = reference_run(task, sandboxes)
            if expected.errors:
                print(f"{task.id}: the reference fails; skipped")
                continue
            every = dataclasses.replace(expected, cases={})
            seconds = [0.0, 0.0]
            for name in task.snippet_names():
                code = "".join(task.reference_body(name))
                for index, which in enumerate((expected, every)):
                    start = time.perf_counter()
                    scored = score_snippet(sandboxes, task, name, code, which)
                    seconds[index] += time.perf_counter() - start
                    assert scored.run.passed, f"{task.id} / {name}: {scored.run.message}"
        finally:
            release_sandboxes(backend, sandboxes)
        totals = [totals[0] + seconds[0], totals[1] + seconds[1]]
        ratio = seconds[0] / seconds[1]
        print(
            f"{task.id:28} {len(task.snippets):>8} {seconds[0]:>11.1f} {seconds[1]:>8.1f} "
            f"{ratio:>6.2f}"
        )
    if totals[1]:
        print(
            f"{'all':28} {'':>8} {totals[0]:>11.1f} {totals[1]:>8.1f} {totals[0] / totals[1]:>6.2f}"
        )
    backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
