"""The harness's own runs of an attempt, and the flags that come from them.

What the agent left in its sandbox is never graded. Its text files (the code,
``reproduce.sh``, ``requirements.txt``) are copied into a fresh sandbox with no
network; rcb creates the venv there from ``requirements.txt`` and runs ``bash
reproduce.sh`` ``reruns`` times, each with a seed in ``RCB_SEED`` that rcb draws then
and the agent never saw. Only what those runs write is graded.

Each flag below blocks a clean pass (the attempt goes to a person, never counts as a
reproduction):

- the code that implements a part of the method (``expected.yaml`` ``modules``) never
  ran in the reruns, traced by :mod:`rerun_trace` in every Python process;
- reruns with different seeds gave identical numbers, or one rerun's runs all agree,
  for metrics the seed moves;
- a rerun finished far faster than the gold run on the same machine;
- a reported number appears as a literal in the submitted files (written, not computed);
- the agent's own ``results.json`` disagrees with the reruns;
- with data shipped in the task's ``data/``: a split the reruns never read, split hashes
  the run reports that are not the files it read, and (``held_out``, ``fit_metrics``) a
  fit metric that moves in one more rerun, with the first rerun's seed, where only the
  held-out split's files were replaced: the held-out data reached the fit.
"""

from __future__ import annotations

import ast
import math
import re
import secrets
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcb_action.reproduce._data import read_splits, shipped, split_names, swapped
from rcb_action.reproduce._stages import (
    ENTRY_POINT,
    HARNESS_DIR,
    RESULTS,
    WORKDIR,
    Check,
    StageChecks,
)
from rcb_action.reproduce._texts import PAPER_FILE
from rcb_action.reproduce._wheelhouse import WHEELHOUSE_MOUNT, sandbox_pip_env
from rcb_action.sandbox import SandboxBackend
from rcb_action.tasks import EXPERIMENT_FILE, ExpectedResults, ModuleCheck, Task

TRACE_SOURCE = Path(__file__).with_name("rerun_trace.py")
TRACE_DIR = ".rcb-trace"
TRACE_FILE = "ran.tsv"
READ_FILE = "read.txt"
INSTALL_TIMEOUT_S = 900
# Files of the attempt that are not its work and never travel to the rerun.
NOT_SUBMITTED = {PAPER_FILE, EXPERIMENT_FILE, RESULTS}
# A rerun shorter than this share of the gold run's, on the same machine, did not do the work.
FAST_SHARE = 0.05
SEED_BOUND = 2**31 - 10_000


def draw_seeds(count: int) -> list[int]:
    """Distinct seeds nobody outside this process knows until the rerun is recorded."""
    seeds: set[int] = set()
    while len(seeds) < count:
        seeds.add(secrets.randbelow(SEED_BOUND))
    return sorted(seeds)


@dataclass
class RerunRun:
    """One run of ``reproduce.sh`` by the harness."""

    seed: int
    duration_s: float
    results: dict[str, Any] | None


@dataclass
class Rerun:
    """The harness's reruns of one attempt: did they all run, what they wrote, what ran."""

    check: Check
    runs: list[RerunRun] = field(default_factory=list)
    # (file, first line) of every code object of the submitted files that started.
    ran: set[tuple[str, int]] = field(default_factory=set)
    # The shipped data files (paths under the agent's folder) any rerun opened.
    read: set[str] = field(default_factory=set)
    # The leakage rerun: the first seed again, the held-out split's files replaced.
    swap: RerunRun | None = None

    def summary(self) -> list[dict[str, Any]]:
        runs = [{"seed": r.seed, "duration_s": round(r.duration_s, 3)} for r in self.runs]
        if self.swap is not None:
            runs.append(
                {"seed": self.swap.seed, "duration_s": round(self.swap.duration_s, 3), "swap": 1}
            )
        return runs


def run_again(
    backend: SandboxBackend, task: Task, wheelhouse: Path, files: dict[str, str], seeds: list[int]
) -> Rerun:
    """Copy ``files`` into a fresh sandbox, install ``requirements.txt``, run ``reproduce.sh``
    once per seed; a failed install or run fails the check with the reason."""
    submitted = {p: t for p, t in files.items() if p not in NOT_SUBMITTED}
    if ENTRY_POINT not in submitted:
        return Rerun(Check(False, f"no {ENTRY_POINT} was submitted"))
    sandbox = backend.open_clean(
        task, mounts={str(wheelhouse): WHEELHOUSE_MOUNT}, env=sandbox_pip_env()
    )
    try:
        checks = StageChecks(sandbox, task)
        sandbox.mkdir(WORKDIR, writable=True)
        sandbox.mkdir(TRACE_DIR, writable=True)
        sandbox.write_files({f"{WORKDIR}/{p}": t.encode("utf-8") for p, t in submitted.items()})
        sandbox.write_files(
            {
                f"{HARNESS_DIR}/sitecustomize.py": TRACE_SOURCE.read_bytes(),
                **{f"{WORKDIR}/{p}": data for p, data in shipped(task).items()},
            },
            writable=False,
        )
        install = (
            "python3 -m venv .venv && "
            + (".venv/bin/pip install -q -r requirements.txt" if "requirements.txt" in submitted else "true")
        )  # fmt: skip
        result = sandbox.exec(["bash", "-c", install], timeout_s=INSTALL_TIMEOUT_S, cwd=WORKDIR)
        log = f"[rerun: {len(submitted)} submitted files copied into a fresh sandbox]\n"
        log += f"$ {install}\n{result.stdout}{result.stderr}"
        if result.returncode != 0 or result.timed_out:
            last = (result.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1][:300]
            error = f"the rerun could not install requirements.txt in a new .venv: {last}"
            return Rerun(Check(False, error, log))
        runs = []
        trace = f"{sandbox.workspace}/{TRACE_DIR}/{TRACE_FILE}"
        env = {
            "PYTHONPATH": f"{sandbox.workspace}/{HARNESS_DIR}",
            "RCB_TRACE_ROOT": checks.root,
            "RCB_TRACE_FILE": trace,
            "RCB_READ_FILE": f"{sandbox.workspace}/{TRACE_DIR}/{READ_FILE}",
        }
        for number, seed in enumerate(seeds, 1):
            check, results, seconds = checks.run({**env, "RCB_SEED": str(seed)})
            log += f"\n[rerun {number} of {len(seeds)}, RCB_SEED={seed}]\n{check.log}"
            if not check.passed:
                return Rerun(
                    Check(
                        False,
                        f"rerun {number} of {len(seeds)} (RCB_SEED={seed}): {check.error}",
                        log,
                    )
                )
            runs.append(RerunRun(seed, seconds, results))
        done = Rerun(
            Check(True, None, log),
            runs,
            _ran(sandbox, f"{TRACE_DIR}/{TRACE_FILE}"),
            _read(sandbox, f"{TRACE_DIR}/{READ_FILE}"),
        )
        expected = task.expected
        if expected is not None and expected.held_out and expected.fit_metrics:
            # After the reads are taken: the swap run's own reads would name the same paths.
            split = expected.held_out
            sandbox.remove(f"{WORKDIR}/data/{split}")
            sandbox.write_files(
                {f"{WORKDIR}/{p}": data for p, data in swapped(task, split).items()},
                writable=False,
            )
            check, results, seconds = checks.run({**env, "RCB_SEED": str(seeds[0])})
            done.check.log += (
                f"\n[leakage rerun: RCB_SEED={seeds[0]} again, data/{split}/ replaced]\n{check.log}"
            )
            done.swap = RerunRun(seeds[0], seconds, results if check.passed else None)
        return done
    finally:
        backend.release(sandbox)


def _read(sandbox: Any, rel: str) -> set[str]:
    return {line for line in _trace(sandbox, rel) if line.startswith("data/")}


def _trace(sandbox: Any, rel: str) -> list[str]:
    """The lines of a trace file the tracer wrote in the sandbox; none if it is missing."""
    try:
        return sandbox.read_file(rel).decode("utf-8", "replace").splitlines()
    except (OSError, ValueError):
        return []


def _ran(sandbox: Any, rel: str) -> set[tuple[str, int]]:
    ran = set()
    for line in _trace(sandbox, rel):
        parts = line.split("\t")
        if len(parts) == 3 and parts[1].isdigit():
            ran.add((parts[0], int(parts[1])))
    return ran


def merged_results(runs: list[RerunRun]) -> dict[str, Any]:
    """One results object for grading: each metric's values of all reruns together, each
    curve's y averaged over the reruns (when their x agree), splits of the first rerun."""
    results = [r.results or {} for r in runs]
    metrics: dict[str, list[Any]] = {}
    for reported in results:
        for name, value in (reported.get("metrics") or {}).items():
            metrics.setdefault(name, []).extend(value if isinstance(value, list) else [value])
    curves: dict[str, Any] = {}
    for name, first in (results[0].get("curves") or {}).items():
        same = [r.get("curves", {}).get(name) for r in results]
        try:
            xs = [list(c["x"]) for c in same]
            ys = [[float(y) for y in c["y"]] for c in same]
        except (TypeError, KeyError, ValueError):
            curves[name] = first
            continue
        if all(x == xs[0] for x in xs) and all(len(y) == len(ys[0]) for y in ys):
            curves[name] = {
                "x": xs[0],
                "y": [statistics.fmean(col) for col in zip(*ys, strict=True)],
            }
        else:
            curves[name] = first
    return {"metrics": metrics, "curves": curves, "splits": results[0].get("splits")}


def _functions(source: str) -> list[tuple[int, int, int]]:
    """(first line as the code object has it, def line, last line) of each function."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            out.append((first, node.lineno, node.end_lineno or node.lineno))
    return out


def _module_ran(
    module: ModuleCheck, files: dict[str, str], ran: set[tuple[str, int]]
) -> tuple[bool, list[str]]:
    """Whether code that implements ``module`` ran: a function whose body matches one of
    its patterns was called, or (when only module-level lines match) that file ran.
    Also the places that match, for the flag's text."""
    places, inline = [], []
    for path, text in sorted(files.items()):
        if not path.endswith(".py"):
            continue
        lines = [
            number
            for number, line in enumerate(text.splitlines(), 1)
            if any(re.search(p, line) for p in module.patterns)
        ]
        if not lines:
            continue
        functions = _functions(text)
        for first, start, end in functions:
            if any(start <= n <= end for n in lines):
                places.append((path, first, start))
        if not any(start <= n <= end for n in lines for _, start, end in functions):
            inline.append(path)
    if places:
        called = any((path, first) in ran for path, first, _ in places)
        return called, [f"{path}:{start}" for path, _, start in places]
    return any((path, 1) in ran for path in inline), [f"{path} (module level)" for path in inline]


def _literals(files: dict[str, str]) -> set[float]:
    found = set()
    for text in files.values():
        # 3.1416, .5, 2., 1e-05, 3.1416E+2: every way Python and JSON write a float
        for token in re.findall(
            r"(?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?", text
        ):
            value = float(token)
            if math.isfinite(value) and value != int(value):
                found.add(value)
    return found


def rerun_flags(
    rerun: Rerun,
    expected: ExpectedResults,
    files: dict[str, str],
    own: dict[str, Any] | None,
    gold_run_s: float | None,
) -> list[str]:
    """Every reason the reruns' numbers cannot be taken as a reproduction."""
    flags: list[str] = []
    submitted = {p: t for p, t in files.items() if p not in NOT_SUBMITTED}
    for module in expected.modules:
        ran, places = _module_ran(module, submitted, rerun.ran)
        if places and not ran:  # no place at all is the module check's flag already
            where = ", ".join(places[:4])
            flags.append(f"the code of '{module.name}' never ran in the reruns ({where})")
    if not expected.modules and not any(path.endswith(".py") for path, _ in rerun.ran):
        flags.append("none of the submitted Python code ran in the reruns")

    per_run = [(r.results or {}).get("metrics") or {} for r in rerun.runs]
    varying = [name for name, m in expected.metrics.items() if m.varies]
    if len(per_run) > 1 and varying:
        values = [[m.get(name) for name in varying] for m in per_run]
        if all(v == values[0] for v in values[1:]):
            flags.append(
                "reruns with different seeds gave identical numbers for "
                + ", ".join(varying)
                + ": the seed does not reach the experiment"
            )
    for name in varying:
        for number, metrics in enumerate(per_run, 1):
            value = metrics.get(name)
            if isinstance(value, list) and len(value) > 1 and all(v == value[0] for v in value):
                flags.append(
                    f"{name}: every run of rerun {number} gave {value[0]!r}; the seed moves it"
                )
                break

    if gold_run_s and rerun.runs:
        fastest = min(r.duration_s for r in rerun.runs)
        if fastest < FAST_SHARE * gold_run_s:
            flags.append(
                f"a rerun took {fastest:.2f} s; the gold run takes {gold_run_s:.1f} s here "
                f"(less than {FAST_SHARE:.0%} of it cannot be the experiment)"
            )

    literals = _literals(submitted)
    for name in expected.metrics:
        copied = sorted(
            {
                v
                for m in per_run
                for v in _as_list(m.get(name))
                if isinstance(v, float) and v in literals
            }
        )
        if copied:
            shown = ", ".join(repr(v) for v in copied[:3])
            flags.append(f"{name}: {shown} written in the submitted files, not computed")

    flags += _own_mismatch(own, per_run, expected)
    return flags


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _mean(values: Any) -> float | None:
    numbers = [
        float(v) for v in _as_list(values) if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    numbers = [v for v in numbers if math.isfinite(v)]
    return statistics.fmean(numbers) if numbers else None


def _own_mismatch(
    own: dict[str, Any] | None, per_run: list[dict[str, Any]], expected: ExpectedResults
) -> list[str]:
    """The agent's own results.json against the reruns, metric by metric: means further
    apart than twice the published spread (at least 1e-9 of the value) disagree."""
    if not own or not isinstance(own.get("metrics"), dict):
        return []
    flags = []
    for name, published in expected.metrics.items():
        said = _mean(own["metrics"].get(name))
        got = _mean([v for m in per_run for v in _as_list(m.get(name))])
        if said is None or got is None:
            continue
        allowed = max(2 * published.std, 1e-9 * max(abs(got), 1.0))
        if abs(said - got) > allowed:
            flags.append(
                f"{name}: the attempt's own results.json says {said:.6g}, the reruns give {got:.6g}"
            )
    return flags


def data_flags(rerun: Rerun, task: Task) -> list[str]:
    """What the reruns did with the task's shipped data: every split read, the split
    hashes a run reports equal to the files it read, and the fit blind to the held-out
    split."""
    flags = _undeclared_splits(rerun, task)
    splits = split_names(task)
    if not splits:
        return flags
    computed = read_splits(task, rerun.read)
    for split in splits:
        if split not in computed:
            flags.append(f"the reruns never opened a file of data/{split}/")
    for number, run in enumerate(rerun.runs, 1):
        said = (run.results or {}).get("splits")
        if not isinstance(said, dict):
            continue
        for split, hashes in said.items():
            given = {str(h) for h in hashes} if isinstance(hashes, list) else set()
            if given != set(computed.get(str(split), [])):
                flags.append(
                    f"rerun {number} reports split '{split}' as {len(given)} example(s) that "
                    "are not the files of it the reruns read"
                )
                break
    expected = task.expected
    if expected is None or not expected.held_out or not expected.fit_metrics or not rerun.runs:
        return flags
    if rerun.swap is None or rerun.swap.results is None:
        flags.append(f"the leakage rerun (data/{expected.held_out}/ replaced) did not finish")
        return flags
    first = (rerun.runs[0].results or {}).get("metrics") or {}
    swap = rerun.swap.results.get("metrics") or {}
    for name in expected.fit_metrics:
        before, after = _as_list(first.get(name)), _as_list(swap.get(name))
        if not _same_numbers(before, after):
            flags.append(
                f"{name} changed ({_short(before)} -> {_short(after)}) when only the held-out "
                f"data/{expected.held_out}/ changed: the held-out data reaches the fit"
            )
    return flags


def _undeclared_splits(rerun: Rerun, task: Task) -> list[str]:
    """Split hashes for splits the task does not have: nothing honest reports those."""
    assert task.config.reproduction is not None
    declared = {*task.config.reproduction.splits, *split_names(task)}
    for number, run in enumerate(rerun.runs, 1):
        said = (run.results or {}).get("splits")
        unknown = (
            sorted(str(s) for s in said if str(s) not in declared) if isinstance(said, dict) else []
        )
        if unknown:
            return [
                f"rerun {number} reports split(s) {', '.join(unknown)} that the task does not "
                "have (its results.json must not invent data)"
            ]
    return []


def _same_numbers(a: list[Any], b: list[Any]) -> bool:
    """Equal up to float rounding (1e-9 relative): the same seed on the same data."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, int | float):
            if x != y:
                return False
        elif not isinstance(y, int | float) or not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12):
            return False
    return True


def _short(values: list[Any]) -> str:
    shown = ", ".join(f"{v:.6g}" if isinstance(v, float) else repr(v) for v in values[:3])
    return shown + (", ..." if len(values) > 3 else "")
