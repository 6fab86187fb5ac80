"""How hard the snippet tasks are for one model: a stratified probe of its scaled pass@1.

Answering all 218 snippets in fresh contexts is costly, and a score over a handful of
snippets drawn anyhow says little: the large snippets carry most of the weight and fail
most often. The probe takes every large snippet (the census: at least --census-lines
weighted lines) and, among the others, one drawn at random from each paper; it weights
the second group's line pass rate by that group's share of the benchmark's lines, and
gives a 95% bootstrap interval over the drawn papers.

    python bench/difficulty.py draw DIR [--seed S] [--census-lines 25] [--tasks GLOB]
        writes DIR/draws.json and DIR/prompts/<key>.md, one prompt file per snippet
        (rcb prompt --paper without, unless --paper with). Give each prompt to a fresh
        context that reads nothing else; one context may answer several prompts if no
        two are of the same paper (draws.json's "context" numbers do that).
    python bench/difficulty.py replay DIR --model NAME
        reads the answers, DIR/answers/<key>.md, into DIR/answers.jsonl for
        rcb evaluate --model replay:DIR/answers.jsonl --paper without --out DIR/results
    python bench/difficulty.py draw DIR --carry OLD/answers.jsonl
        a drawn snippet whose prompt is byte for byte the one an earlier probe's answer was
        made for keeps that answer (DIR/answers/<key>.md, marked "carried" in draws.json);
        only the others need fresh contexts.
    python bench/difficulty.py estimate DIR [--results DIR/results]
        prints the estimate, each stratum's lines passed, and every failure.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rcb_action.errors import RcbError
from rcb_action.prompts import build_prompt
from rcb_action.results import ResultStore
from rcb_action.tasks import Task, load_tasks_of_kind, resolve_tasks_dir

CENSUS = "census"
SAMPLED = "sampled"
BOOTSTRAP_DRAWS = 10_000


@dataclass
class Draw:
    key: str
    task: str
    snippet: str
    weight: int
    stratum: str
    context: int | None  # None: carried
    prompt_sha: str
    carried: str | None = None  # the answers file an earlier probe's answer came from


def _stratum(weight: int, census_lines: int) -> str:
    return CENSUS if weight >= census_lines else SAMPLED


def _strata(tasks: list[Task], census_lines: int) -> dict[str, int]:
    """Weighted lines of the whole selection in each stratum."""
    lines = {CENSUS: 0, SAMPLED: 0}
    for task in tasks:
        for name in task.snippet_names():
            weight = task.weight(name)
            lines[_stratum(weight, census_lines)] += weight
    return lines


def _carried(paths: list[Path], paper: str) -> dict[tuple[str, str, str], tuple[str, str]]:
    """Earlier probes' answers by (task, snippet, prompt_sha): (completion, source)."""
    answers: dict[tuple[str, str, str], tuple[str, str]] = {}
    for path in paths:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise RcbError(f"{path}: cannot read ({exc.strerror})") from None
        for number, line in enumerate(lines, 1):
            try:
                row = json.loads(line)
                key = (row["task"], row["snippet"], row["prompt_sha"])
                completion = row["completion"]
            except (json.JSONDecodeError, KeyError, TypeError):
                raise RcbError(f"{path}:{number}: not a replay row") from None
            if row.get("paper", paper) == paper:
                answers.setdefault(key, (completion, str(path)))
    return answers


def draw(args: argparse.Namespace) -> int:
    tasks = load_tasks_of_kind(resolve_tasks_dir(args.tasks_dir), args.tasks, "snippet")
    carry = _carried(args.carry, args.paper)
    chosen: list[tuple[Task, str, str]] = []
    for task in sorted(tasks, key=lambda t: t.id):
        strata = {n: _stratum(task.weight(n), args.census_lines) for n in task.snippet_names()}
        chosen += [(task, n, CENSUS) for n, s in strata.items() if s == CENSUS]
        rest = [n for n, s in strata.items() if s == SAMPLED]
        if rest:
            # Seeded per task: a task that did not change draws the same snippet again.
            rng = random.Random(f"{args.seed}:{task.id}")
            chosen.append((task, rng.choice(rest), SAMPLED))
    prompts = args.dir / "prompts"
    prompts.mkdir(parents=True, exist_ok=True)
    draws: list[Draw] = []
    seen: dict[str, int] = {}
    for index, (task, name, stratum) in enumerate(chosen):
        prompt = build_prompt(task, name, paper=args.paper)
        key = f"s{index:03d}"
        (prompts / f"{key}.md").write_text(prompt.text, encoding="utf-8")
        found = carry.get((task.id, name, prompt.sha))
        context = None
        if found:
            answers = args.dir / "answers"
            answers.mkdir(exist_ok=True)
            (answers / f"{key}.md").write_text(found[0], encoding="utf-8")
        else:
            # The n-th fresh prompt of a paper goes to context n: none sees a paper twice.
            context = seen.get(task.id, 0)
            seen[task.id] = context + 1
        draws.append(
            Draw(key, task.id, name, task.weight(name), stratum, context, prompt.sha,
                 carried=found[1] if found else None)
        )  # fmt: skip
    record = {
        "seed": args.seed,
        "census_lines": args.census_lines,
        "paper": args.paper,
        "tasks": args.tasks,
        "lines": _strata(tasks, args.census_lines),
        "draws": [asdict(d) for d in draws],
    }
    (args.dir / "draws.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    census = sum(d.stratum == CENSUS for d in draws)
    fresh = [d for d in draws if d.carried is None]
    contexts = max(seen.values(), default=0)
    print(
        f"{len(draws)} prompts in {args.dir / 'prompts'}: {census} census snippets "
        f"(>= {args.census_lines} lines), {len(draws) - census} drawn (one a paper); "
        f"{len(draws) - len(fresh)} carried from earlier answers, {len(fresh)} to answer "
        f"in {contexts} context(s) at least",
        file=sys.stderr,
    )
    return 0


def _load(folder: Path) -> dict[str, Any]:
    path = folder / "draws.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RcbError(
            f"{path}: not found (run: python bench/difficulty.py draw {folder})"
        ) from None
    except json.JSONDecodeError as exc:
        raise RcbError(f"{path}: not JSON ({exc})") from None
    return data


def replay(args: argparse.Namespace) -> int:
    record = _load(args.dir)
    rows = []
    for d in record["draws"]:
        answer = args.dir / "answers" / f"{d['key']}.md"
        if not answer.is_file():
            raise RcbError(f"{answer}: no answer for {d['task']} / {d['snippet']}")
        rows.append(
            {
                "task": d["task"],
                "snippet": d["snippet"],
                "model": args.model,
                "paper": record["paper"],
                "prompt_sha": d["prompt_sha"],
                "completion": answer.read_text(encoding="utf-8"),
            }
        )
    out = args.dir / "answers.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    print(f"{len(rows)} answers written to {out}", file=sys.stderr)
    return 0


@dataclass
class Estimate:
    scaled: float  # percent of the benchmark's lines
    low: float
    high: float
    census: tuple[int, int]  # lines passed, lines
    sampled: tuple[int, int]  # lines passed, lines answered


def stratified(
    verdicts: list[tuple[str, str, int, bool]], lines: dict[str, int], seed: int = 0
) -> Estimate:
    """``verdicts``: (stratum, task, weight, passed) of every answered draw.

    The census counts as it is; the sampled stratum's line pass rate (a ratio over its
    papers) stands for all of that stratum's lines; the interval resamples those papers.
    """
    census = [(w, p) for s, _, w, p in verdicts if s == CENSUS]
    census_passed = sum(w for w, p in census if p)
    papers: dict[str, list[tuple[int, bool]]] = {}
    for stratum, task, weight, passed in verdicts:
        if stratum == SAMPLED:
            papers.setdefault(task, []).append((weight, passed))
    clusters = list(papers.values())
    total = lines[CENSUS] + lines[SAMPLED]

    def value(sample: list[list[tuple[int, bool]]]) -> float:
        answered = sum(w for cluster in sample for w, _ in cluster)
        passed = sum(w for cluster in sample for w, p in cluster if p)
        rate = passed / answered if answered else 0.0
        return 100.0 * (census_passed + rate * lines[SAMPLED]) / total

    rng = random.Random(seed)
    boot = sorted(
        value([rng.choice(clusters) for _ in clusters]) for _ in range(BOOTSTRAP_DRAWS)
    ) if clusters else [value([])]  # fmt: skip
    answered = [item for cluster in clusters for item in cluster]
    return Estimate(
        scaled=value(clusters),
        low=boot[int(0.025 * (len(boot) - 1))],
        high=boot[int(0.975 * (len(boot) - 1))],
        census=(census_passed, sum(w for w, _ in census)),
        sampled=(sum(w for w, p in answered if p), sum(w for w, _ in answered)),
    )


def estimate(args: argparse.Namespace) -> int:
    record = _load(args.dir)
    results = args.results or args.dir / "results"
    if not (results / "results.jsonl").is_file():
        raise RcbError(
            f"{results}: no results.jsonl (score with rcb evaluate --model "
            f"replay:{args.dir / 'answers.jsonl'} --paper {record['paper']} --out {results})"
        )
    records = {
        (r.task, r.snippet): r
        for r in ResultStore(results).records()
        if r.paper == record["paper"] and r.sample == 0
    }
    verdicts = []
    failures = []
    for d in record["draws"]:
        found = records.get((d["task"], d["snippet"]))
        if found is None:
            raise RcbError(
                f"{results}: no result for {d['task']} / {d['snippet']} "
                f"(score {args.dir / 'answers.jsonl'} with rcb evaluate first)"
            )
        if found.prompt_sha != d["prompt_sha"]:
            raise RcbError(
                f"{results}: {d['task']} / {d['snippet']} was scored on another prompt than "
                "the one drawn (the task changed since the draw): draw again"
            )
        passed = found.status == "pass"
        verdicts.append((d["stratum"], d["task"], d["weight"], passed))
        if not passed:
            failures.append(f"  {d['stratum']:7} {d['weight']:3} {d['task']} / {d['snippet']}")
            failures.append(f"          {found.failure_class}: {found.message[:160]!r}")
    result = stratified(verdicts, record["lines"], seed=args.seed)
    c_pass, c_lines = result.census
    s_pass, s_lines = result.sampled
    print(f"census (>= {record['census_lines']} lines): {c_pass} of {c_lines} lines passed")
    print(
        f"sampled: {s_pass} of {s_lines} answered lines passed, standing for "
        f"{record['lines'][SAMPLED]} lines"
    )
    print(
        f"scaled pass@1 about {result.scaled:.1f} "
        f"(95% bootstrap interval {result.low:.1f} to {result.high:.1f})"
    )
    if failures:
        print("failed:\n" + "\n".join(failures))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("draw", help="write the prompts of a probe")
    p.add_argument("dir", type=Path)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--census-lines", type=int, default=25)
    p.add_argument("--paper", choices=["with", "without"], default="without")
    p.add_argument("--tasks", default=None, help="task id glob (default: all)")
    p.add_argument("--tasks-dir", type=Path, default=None)
    p.add_argument(
        "--carry",
        type=Path,
        action="append",
        default=[],
        metavar="ANSWERS_JSONL",
        help="an earlier probe's replay file: its answers to byte-identical prompts are kept",
    )
    p.set_defaults(run=draw)
    p = sub.add_parser("replay", help="gather DIR/answers/<key>.md into a replay file")
    p.add_argument("dir", type=Path)
    p.add_argument("--model", required=True, help="the name results are recorded under")
    p.set_defaults(run=replay)
    p = sub.add_parser("estimate", help="the stratified estimate from scored answers")
    p.add_argument("dir", type=Path)
    p.add_argument("--results", type=Path, default=None, help="default: DIR/results")
    p.add_argument("--seed", type=int, default=0, help="of the bootstrap")
    p.set_defaults(run=estimate)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except RcbError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
