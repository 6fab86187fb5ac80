"""Model calls and test runs in flight apart: how close a run comes to its lower bound.

A litellm custom provider on no network (the tests' ``answering`` provider) answers
every snippet's prompt with the true snippet after L seconds. Three timed runs of
``rcb evaluate`` over the same snippets, one after the other in this process, after an
untimed warm-up that builds the environments and caches the reference runs:

1. the provider answers at once: the wall time of the test side alone, T0;
2. it answers after L seconds: wall time T1;
3. the same, with every tenth prompt answered 429 first (``Retry-After`` of L
   seconds): wall time T2.

The lower bound of a run is max(calls x L / concurrency, T0); the script prints each
run's ratio to it (goal: at most 1.25). Every record must pass.

    python bench/bench_throughput.py [--tasks GLOB] [--latency 2] [--concurrency 16] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # the checkout, and the tests' provider

from answering_provider import answering_provider  # noqa: E402

from rcb_action.results import ResultStore  # noqa: E402
from rcb_action.runner import EvalConfig, evaluate  # noqa: E402
from rcb_action.tasks import load_tasks, resolve_tasks_dir  # noqa: E402

GOAL = 1.25


def timed_run(
    out: Path, args: argparse.Namespace, latency_s: float, rate_limit_every: int
) -> tuple[float, int, int]:
    """(wall seconds, calls answered, records that did not pass) of one run."""
    tasks = [t for t in load_tasks(resolve_tasks_dir(), args.tasks) if t.config.kind == "snippet"]
    with answering_provider(latency_s=latency_s, retry_after_s=latency_s) as provider:
        provider.answer_with_references(tasks, rate_limit_every=rate_limit_every)
        config = EvalConfig(
            models=["answering/bench"],
            out=out,
            tasks=args.tasks,
            paper="without",
            workers=args.workers,
            concurrency=args.concurrency,
            progress=False,
        )
        started = time.monotonic()
        evaluate(config)
        wall = time.monotonic() - started
    records = ResultStore(out).records()
    failed = sum(r.status != "pass" for r in records)
    return wall, provider.calls - provider.rate_limited, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=None, help="task id glob (default: every snippet task)")
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per call (L)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="rcb-bench-throughput-") as scratch:
        root = Path(scratch)
        print("warm-up (environments and reference runs, untimed) ...", file=sys.stderr)
        timed_run(root / "warm", args, 0.0, 0)
        t0, calls, failed0 = timed_run(root / "instant", args, 0.0, 0)
        t1, _, failed1 = timed_run(root / "latency", args, args.latency, 0)
        t2, _, failed2 = timed_run(root / "rate-limited", args, args.latency, 10)
    bound = max(calls * args.latency / args.concurrency, t0)
    print(
        f"{calls} calls, L = {args.latency:g} s, concurrency {args.concurrency}, "
        f"{args.workers} test worker(s)"
    )
    print(f"T0 (answers at once):           {t0:7.1f} s")
    print(f"calls x L / concurrency:        {calls * args.latency / args.concurrency:7.1f} s")
    print(f"lower bound:                    {bound:7.1f} s")
    print(f"T1 (L per call):                {t1:7.1f} s   ratio {t1 / bound:.2f}")
    print(f"T2 (L per call, 10% 429 first): {t2:7.1f} s   ratio {t2 / bound:.2f}")
    print(f"goal: each ratio at most {GOAL}")
    if failed0 or failed1 or failed2:
        print(f"records not passing: {failed0}, {failed1}, {failed2} (every one should pass)")
        return 1
    return 0 if max(t1, t2) / bound <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
