"""How fast the leaderboard site builds, and how much it weighs.

Writes synthetic results (by default 50 models × 500 snippets × 3 samples = 75,000
attempt records over 25 papers, with realistic completion sizes, plus a small
reproduction.jsonl) and a models registry for them, then runs the real
``rcb site build`` code on them: reading and resolving the records, computing the
scores (a bootstrap interval per model), and rendering every page. Prints the time
of each stage (wall and CPU, since the machine may be shared), then times whole
builds (the best of ``--repeat`` counts: neighbours on a shared machine only ever
add time), the site's size and its largest files, and checks that every build
gave the same bytes. Targets: the build in at most 10 s, the site at most 3 MB.

    python bench/bench_site.py [--models N] [--snippets N] [--samples N] [--tasks N] [--repeat N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rcb_action.models import load_registry  # noqa: E402
from rcb_action.reproduce import (  # noqa: E402
    STAGES,
    ReproductionRecord,
    ReproductionStore,
    StageRecord,
    dimensions_of,
)
from rcb_action.results import RESULTS_FILE, Record  # noqa: E402
from rcb_action.site import (  # noqa: E402
    build_site,
    build_site_data,
    load_results,
    render_site,
)

T = TypeVar("T")
TARGET_S = 10.0
TARGET_BYTES = 3_000_000
DOMAINS = ["ml", "ml", "ml", "biology", "materials", "finance", "physics", "climate"]
CLASSES = ["assertion"] * 6 + ["name", "type", "value", "index_key", "attribute", "syntax"]
CLASSES += ["timeout", "runtime_other", "no_code", "import", "memory"]
PROVIDERS = ["openai", "anthropic", "google", "meta", "mistral", "deepseek", "qwen", "xai"]
CODE = """        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.scale
        decay = torch.cumsum(torch.log(torch.sigmoid(self.forget(x))), dim=-1)
        scores = scores + decay[..., :, None] - decay[..., None, :]
        mask = torch.ones(n, n, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
"""


def write_results(folder: Path, models: int, snippets: int, samples: int, tasks: int) -> int:
    rng = random.Random(20250602)
    per_task = max(1, snippets // tasks)
    papers = []
    for t in range(tasks):
        published = dt.date(2024, 1, 10) + dt.timedelta(days=int(t * 660 / max(tasks - 1, 1)))
        papers.append((f"paper-{t:02d}", published, DOMAINS[t % len(DOMAINS)]))
    snippet_list = [
        (papers[i // per_task % tasks], f"step {i % per_task:02d}", rng.randint(1, 30))
        for i in range(snippets)
    ]
    start = dt.datetime(2025, 11, 1, tzinfo=dt.UTC)
    count = 0
    with open(folder / RESULTS_FILE, "w", encoding="utf-8") as out:
        for m in range(models):
            model = f"{PROVIDERS[m % len(PROVIDERS)]}/synthetic-model-{m:02d}"
            skill = 0.1 + 0.8 * rng.random()
            for s, ((task, published, domain), name, weight) in enumerate(snippet_list):
                for sample in range(samples):
                    passed = rng.random() < skill
                    completion = f"Here is the implementation.\n```python\n{CODE}```\n"
                    record = Record(
                        task=task,
                        snippet=name,
                        model=model,
                        sample=sample,
                        task_sha=hashlib.sha256(task.encode()).hexdigest()[:16],
                        prompt_sha=hashlib.sha256(f"{task}/{name}".encode()).hexdigest()[:16],
                        weight=weight,
                        published=published,
                        domain=domain,
                        status="pass" if passed else "fail",
                        failure_class=None if passed else rng.choice(CLASSES),
                        message=""
                        if passed
                        else "tests/test_x.py::test_y: AssertionError: "
                        "Not equal to tolerance rtol=1e-07 (mismatched elements: 3 / 16)",
                        tests_expected=4,
                        tests_ran=4,
                        tests_passed=4 if passed else rng.randint(0, 3),
                        completion=completion,
                        code=CODE,
                        tokens_in=rng.randint(4000, 30000),
                        tokens_out=rng.randint(100, 800),
                        cost_usd=round(rng.random() * 0.02, 6),
                        duration_model_s=round(rng.random() * 20, 3),
                        duration_test_s=round(rng.random() * 3, 3),
                        log_dir=f"logs/{model}/{task}/{name}/s{sample}",
                        created_at=(
                            start + dt.timedelta(seconds=m * 4000 + s * 3 + sample)
                        ).isoformat(),
                        rcb_version="0.1.0",
                    )
                    out.write(record.model_dump_json() + "\n")
                    count += 1
    store = ReproductionStore(folder)
    for m in range(models):
        for t in range(4):
            stages, dead = {}, False
            for stage in STAGES:
                dead = dead or rng.random() > 0.8
                status = "not_run" if dead else "passed"
                stages[stage] = StageRecord(stage=stage, status=status, success=not dead)
            scores = {
                "plan": rng.random(),
                "method_accuracy": rng.random(),
                "experiment_design": rng.random(),
            }
            failed = next((name for name, st in stages.items() if not st.success), None)
            store.append(
                ReproductionRecord(
                    task=f"repro-{t}", model=f"{PROVIDERS[m % len(PROVIDERS)]}/synthetic-model-{m:02d}",
                    task_sha="synthetic", published=dt.date(2025, 1, 1), status="scored", failed_stage=failed,
                    stages=stages, scores=scores, dimensions=dimensions_of(stages, scores, 0.6),
                    created_at=start.isoformat(),
                )
            )  # fmt: skip
    return count


def write_registry(path: Path, models: int) -> None:
    rng = random.Random(7)
    lines = ["models:"]
    for m in range(models):
        if m % 10 == 9:
            continue  # some models have no registry entry (cutoff unknown)
        cutoff = dt.date(2023, 6, 1) + dt.timedelta(days=rng.randint(0, 730))
        name = f"{PROVIDERS[m % len(PROVIDERS)]}/synthetic-model-{m:02d}"
        lines.append(
            f'  "{name}": {{display_name: "Synthetic Model {m:02d}", '
            f"provider: {PROVIDERS[m % len(PROVIDERS)]}, knowledge_cutoff: {cutoff.isoformat()}}}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def timed(label: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[T, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args, **kwargs)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"  {label:<34} {wall:6.2f} s wall  {cpu:6.2f} s CPU")
    return result, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--snippets", type=int, default=500)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=25)
    parser.add_argument(
        "--repeat", type=int, default=3, help="whole builds to time (the best counts)"
    )
    args = parser.parse_args()
    os.environ.pop("SOURCE_DATE_EPOCH", None)

    with tempfile.TemporaryDirectory(prefix="rcb-bench-site-") as tmp:
        base = Path(tmp)
        results, tasks_dir = base / "results", base / "tasks"
        results.mkdir()
        tasks_dir.mkdir()  # no task folders: every paper is known from the records only
        registry_file = base / "registry.yaml"
        write_registry(registry_file, args.models)
        t0 = time.perf_counter()
        count = write_results(results, args.models, args.snippets, args.samples, args.tasks)
        size = (results / RESULTS_FILE).stat().st_size
        print(
            f"synthetic results: {args.models} models × {args.snippets} snippets × "
            f"{args.samples} samples = {count:,} records, {size / 1e6:.1f} MB "
            f"(written in {time.perf_counter() - t0:.1f} s)"
        )
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f}")

        print("stages (one build, taken apart):")
        inputs, _ = timed("read and resolve records", load_results, [results])
        registry = load_registry([registry_file])
        data, _ = timed(
            "scores, intervals, window data",
            build_site_data,
            inputs.records,
            [],
            registry,
            inputs.reproduction,
            inputs.gold,
        )
        staging = base / "staging"
        staging.mkdir()
        timed("render pages and write files", render_site, data, inputs, staging)

        print(f"whole build (rcb site build), {args.repeat} runs (each replaces the last):")
        out = base / "site"
        walls, digests = [], set()
        for run in range(1, args.repeat + 1):
            built, wall = timed(
                f"build {run}",
                build_site,
                [results],
                out,
                tasks_dir=tasks_dir,
                registry_files=[registry_file],
            )
            walls.append(wall)
            digests.add(tree_digest(out))
        wall, same, first = min(walls), len(digests) == 1, digests.pop()

        files = sorted(((out / f).stat().st_size, f) for f in built.files)
        html = [s for s, f in files if f.endswith(".html")]
        print(
            f"site: {len(built.files)} files ({len(html)} pages), {built.bytes / 1e6:.2f} MB; "
            f"largest: " + ", ".join(f"{f} {s / 1e3:.0f} kB" for s, f in files[::-1][:4])
        )
        print(f"deterministic: {'yes' if same else 'NO'} (sha256 of the tree {first[:16]})")
        time_ok, size_ok = wall <= TARGET_S, built.bytes <= TARGET_BYTES
        print(
            f"target build ≤ {TARGET_S:.0f} s: best of {len(walls)} {wall:.2f} s "
            f"{'ok' if time_ok else 'MISSED'} (a busy machine adds wall time, not CPU time)"
        )
        print(
            f"target size ≤ {TARGET_BYTES / 1e6:.0f} MB: {built.bytes / 1e6:.2f} MB "
            f"{'ok' if size_ok else 'MISSED'}"
        )
        return 0 if (time_ok and size_ok and same) else 1


if __name__ == "__main__":
    sys.exit(main())
