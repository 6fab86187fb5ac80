"""``rcb validate``: a task is valid when it loads, its reference passes every
snippet's tests, the ``null`` body fails every snippet, and its suite is quick. A
reproduction task is valid when its gold reproduction passes every stage."""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rcb_action.errors import RcbError, TaskError
from rcb_action.sandbox import SandboxBackend
from rcb_action.scoring import (
    open_sandboxes,
    reference_run,
    reference_seconds,
    release_sandboxes,
    score_snippet,
    selection_key,
)
from rcb_action.tasks import Task, load_task
from rcb_action.validate._mutants import (
    SnippetMutants,
    mutate_task,
    read_mutants_file,
    write_mutants_file,
)

if TYPE_CHECKING:
    from rcb_action.reproduce import ReproductionRecord

# A paper's whole suite should run in this many seconds on one core (the reference run).
SUITE_BUDGET_S = 30.0
_LOCATED = re.compile(r"^(?P<path>[^:]+?)(?::(?P<line>\d+))?: (?P<message>.*)$")


@dataclass(frozen=True)
class Problem:
    """One thing to fix, located as precisely as it can be."""

    path: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass
class TaskCheck:
    """The outcome of validating one task folder."""

    root: Path
    task: Task | None = None
    problems: list[Problem] = field(default_factory=list)
    reference_seconds: float = 0.0
    null_passed: list[str] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    mutants: dict[str, SnippetMutants] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)
    # A reproduction task's gold run against its targets, one line per metric.
    targets: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def problem_from_error(text: str) -> Problem:
    match = _LOCATED.match(text)
    if not match:
        return Problem(path="", line=None, message=text)
    line = match["line"]
    return Problem(path=match["path"], line=int(line) if line else None, message=match["message"])


def check_task(
    root: Path,
    backend: SandboxBackend,
    *,
    mutants: bool = False,
    workers: int = 1,
    seeds: int = 1,
) -> TaskCheck:
    """Load ``root`` and check it in ``backend``'s sandbox. Never raises for a task's fault.

    With ``mutants``, also mutation-test every snippet (see :mod:`._mutants`), store
    the kills in the task's ``mutants.json`` and flag snippets that kill none. With
    ``seeds`` above 1, a task with cases and checks is also graded on its reference
    under ``RCB_SEED`` 1..seeds-1: a check that fails for the reference under some seed
    was tuned to one.
    """
    check = TaskCheck(root=root)
    try:
        task = load_task(root)
    except TaskError as exc:
        check.problems.append(problem_from_error(str(exc)))
        return check
    check.task = task
    if task.config.kind == "snippet":
        _check_paper(check, task)
        from rcb_action.validate._giveaways import check_giveaways

        check_giveaways(check, task)
    reason = backend.skip_reason(task)
    if reason:
        check.extra["skipped"] = reason
        return check
    if task.config.kind == "reproduction":
        _check_gold(check, task, backend, adversaries=mutants)
        return check
    yaml_path = str(root / "task.yaml")
    if task.grading == "in-process":
        check.warnings.append(
            Problem(
                yaml_path,
                None,
                "in-process tests (forgeable): the model's code runs in the process that "
                "asserts, so a pass can be forged; move the tests to cases/ and checks/",
            )
        )
    sandboxes = open_sandboxes(backend, task)
    try:
        expected = reference_run(task, sandboxes)
        check.reference_seconds = reference_seconds(task, sandboxes)
        if expected.visible_error:
            check.problems.append(
                Problem(yaml_path, None, f"key 'agent': {expected.visible_error}")
            )
        if task.grading == "cases" and not expected.errors:
            for seed in range(1, seeds):
                other = reference_run(task, sandboxes, seed=seed)
                if other.errors:
                    why = next(iter(other.errors.values()))
                    check.problems.append(
                        Problem(
                            yaml_path,
                            None,
                            f"the reference fails its checks with RCB_SEED={seed}: {why}",
                        )
                    )
                    break
            check.extra["seeds"] = seeds
        for name in task.snippet_names():
            key = selection_key(task.tests_for(name))
            snippet = task.snippets[name]
            where = str(root / snippet.path)
            if key in expected.errors:
                check.problems.append(
                    Problem(
                        yaml_path,
                        None,
                        f"snippet '{name}': the reference fails its tests: {expected.errors[key]}",
                    )
                )
                continue
            if name not in task.config.snippets:
                check.warnings.append(
                    Problem(
                        yaml_path,
                        None,
                        f"key 'snippets.{name}': no tests selected; the whole suite decides",
                    )
                )
            if key in expected.cases:
                # Attempts run only the cases these checks read: the reference must pass so.
                reference = "".join(task.reference_body(name))
                own = score_snippet(sandboxes, task, name, reference, expected, reuse=False).run
                if not own.passed:
                    check.problems.append(
                        Problem(
                            yaml_path,
                            None,
                            f"snippet '{name}': the reference fails when only the cases its checks "
                            f"read ({', '.join(expected.cases[key]) or 'none'}) are run; do the cases "
                            f"depend on each other (shared random state, order)? {own.message}",
                        )
                    )
            run = score_snippet(sandboxes, task, name, "pass", expected).run
            if run.passed:
                check.null_passed.append(name)
                check.problems.append(
                    Problem(
                        where,
                        snippet.start + 1,
                        f"snippet '{name}': the null body passes its tests, so they do not check it",
                    )
                )
        if mutants and not check.problems:
            stored = read_mutants_file(task, any_version=True)
            results = mutate_task(task, sandboxes, expected, workers=workers, stored=stored)
            write_mutants_file(task, results)
            check.mutants = results
            for name, entry in results.items():
                if entry.killed == 0:
                    snippet = task.snippets[name]
                    check.problems.append(
                        Problem(
                            str(root / snippet.path),
                            snippet.start + 1,
                            f"snippet '{name}': its tests kill none of its {entry.total} mutants",
                        )
                    )
        if check.reference_seconds > min(SUITE_BUDGET_S, float(task.config.timeout_s)):
            check.problems.append(
                Problem(
                    yaml_path,
                    None,
                    f"the reference suite took {check.reference_seconds:.1f} s; keep it under "
                    f"{min(SUITE_BUDGET_S, float(task.config.timeout_s)):.0f} s",
                )
            )
    except RcbError:
        raise
    except Exception as exc:  # infrastructure, not the task's fault: say so, do not crash
        check.problems.append(
            Problem(yaml_path, None, f"harness error while checking: {type(exc).__name__}: {exc}")
        )
    finally:
        release_sandboxes(backend, sandboxes)
    return check


def _check_paper(check: TaskCheck, task: Task) -> None:
    """The paper can be had (fetched once and cached): a version arXiv has only as a PDF
    is refused unless the task vendors a full text; arXiv out of reach is a warning."""
    from rcb_action.papers import NoLatexSource, PaperUnavailable, paper_for

    where = str(task.root / "task.yaml")
    try:
        paper_for(task)
    except NoLatexSource as exc:
        check.problems.append(Problem(where, None, f"key 'paper': {exc}"))
    except PaperUnavailable as exc:
        check.warnings.append(Problem(where, None, f"key 'paper': not checked: {exc}"))


def _gold_against_targets(task: Task, record: ReproductionRecord) -> list[str]:
    """One line per metric: the gold run's mean beside the target and where it comes from."""
    assert task.expected is not None
    source = task.expected.source
    lines = []
    for name, target in task.expected.metrics.items():
        got = record.metrics.get(name)
        gold = "-" if got is None or got.mean is None else f"{got.mean:.4g}"
        runs = len(got.reproduced) if got is not None else 0
        where = f"paper, {target.location}" if source == "paper" and target.location else source
        lines.append(
            f"{name}: gold {gold} over {runs} runs; target {target.mean:.4g} +- 2 x "
            f"{target.std:.4g} ({where})"
        )
    return lines


def _check_gold(
    check: TaskCheck, task: Task, backend: SandboxBackend, *, adversaries: bool = False
) -> None:
    """A reproduction task is valid when its gold reproduction passes every stage; with
    ``adversaries`` (``--mutants``), also when every adversary built from its reference
    fails with its own flag (the reproduction track's mutants)."""
    from rcb_action.paths import cache_dir
    from rcb_action.reproduce import (
        BASELINE_FLAGS,
        LOGS_DIR,
        check_adversaries,
        check_gold,
        gold_failure,
        gold_passed,
    )

    yaml_path = str(check.root / "task.yaml")
    out = cache_dir("validate-gold")
    started = time.monotonic()
    try:
        record, fresh = check_gold(task, backend, out)
    except RcbError as exc:
        check.problems.append(
            Problem(yaml_path, None, f"the gold reproduction cannot start: {exc}")
        )
        return
    check.reference_seconds = time.monotonic() - started
    check.extra["gold"] = "gold reproduction passed" + ("" if fresh else " (cached)")
    check.targets = _gold_against_targets(task, record)
    if not gold_passed(record):
        logs = out / LOGS_DIR / "_gold" / task.id
        check.problems.append(
            Problem(
                yaml_path,
                None,
                f"the gold reproduction fails ({gold_failure(record)}); its logs are in {logs}",
            )
        )
        return
    if not adversaries:
        return
    try:
        escapes = check_adversaries(task, backend, out, record)
    except RcbError as exc:
        check.problems.append(Problem(yaml_path, None, f"the adversaries cannot start: {exc}"))
        return
    check.reference_seconds = time.monotonic() - started
    caught = sum(escape is None for escape in escapes.values())
    check.extra["gold"] = (
        f"{check.extra['gold']}; {caught} of {len(escapes)} adversaries caught by their flags"
    )
    expected_path = str(check.root / "expected.yaml")
    for kind, escape in escapes.items():
        if escape is not None:
            check.problems.append(
                Problem(
                    expected_path,
                    None,
                    f"adversary baseline:{kind} {escape}: this task cannot tell its forgery "
                    f"from a reproduction (the flag it needs: {BASELINE_FLAGS[kind]!r}; logs in "
                    f"{out / LOGS_DIR})",
                )
            )


def validate_tasks(
    roots: list[Path],
    backend: SandboxBackend,
    *,
    mutants: bool = False,
    workers: int = 1,
    quiet: bool = False,
    seeds: int = 1,
) -> list[TaskCheck]:
    """Check every task folder; prints one line per task and one per problem."""
    checks = []
    for root in roots:
        check = check_task(root, backend, mutants=mutants, workers=workers, seeds=seeds)
        checks.append(check)
        if quiet:
            continue
        for warning in check.warnings:
            print(f"  warning: {warning}", file=sys.stderr)
        if check.ok:
            extra = f", skipped: {check.extra['skipped']}" if "skipped" in check.extra else ""
            snippets = len(check.task.snippets) if check.task else 0
            if "gold" in check.extra:
                print(
                    f"ok    {root.name}: {check.extra['gold']} in {check.reference_seconds:.1f} s",
                    file=sys.stderr,
                )
                for line in check.targets:
                    print(f"      {line}", file=sys.stderr)
                continue
            if "sizes" in check.extra:
                extra += f", {check.extra['sizes']}"
            if check.mutants:
                killed = sum(m.killed for m in check.mutants.values())
                total = sum(m.total for m in check.mutants.values())
                extra += f", mutants killed {killed}/{total} ({100 * killed / max(total, 1):.0f}%)"
                reused = sum(1 for m in check.mutants.values() if m.reused)
                if reused:
                    extra += f" ({reused} snippet(s) unchanged, kept from mutants.json)"
            print(
                f"ok    {root.name}: {snippets} snippets, reference {check.reference_seconds:.1f} s{extra}",
                file=sys.stderr,
            )
        else:
            sizes = f" ({check.extra['sizes']})" if "sizes" in check.extra else ""
            print(f"FAIL  {root.name}: {len(check.problems)} problem(s){sizes}", file=sys.stderr)
            for problem in check.problems:
                print(f"  {problem}")
    return checks
