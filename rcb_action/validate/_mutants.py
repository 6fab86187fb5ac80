"""Mutation testing of snippet tests: do they catch small, plausible mistakes?

Each snippet's reference body is parsed and mutated one site at a time: an
operator flipped, a statement dropped, a constant changed, two arguments
swapped, a unary minus removed, ``min``/``max`` exchanged. A mutant is killed
when the snippet's tests fail on it. Every snippet must kill at least one.

A run that says more about the machine than the mutant (a harness error, or a
timeout while other mutants ran beside it) is run again on its own before it
counts: a timeout again is a kill (the mutant loops), a pass is a survivor, and a
second harness error counts as a survivor too, so the kill rate is never inflated.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import json
import textwrap
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from rcb_action.scoring import Expected, Sandboxes, TestRun, score_snippet, selection_key
from rcb_action.tasks import Task

MAX_MUTANTS_PER_SNIPPET = 12
MUTANTS_FILE = "mutants.json"
# Bump when the mutant generator changes, so stored results are not reused across it.
_SCHEME = "1"

_BINOP_SWAP: dict[type, type] = {
    ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult, ast.Pow: ast.Mult, ast.Mod: ast.Mult, ast.MatMult: ast.Mult,
}  # fmt: skip
_CMP_SWAP: dict[type, type] = {
    ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}  # fmt: skip
_BOOL_SWAP: dict[type, type] = {ast.And: ast.Or, ast.Or: ast.And}
_NAME_SWAP = {"min": "max", "max": "min", "minimum": "maximum", "maximum": "minimum"}


@dataclass(frozen=True)
class Mutant:
    kind: str
    line: int
    code: str


@dataclass
class SnippetMutants:
    snippet: str
    total: int = 0
    killed: int = 0
    survivors: list[dict[str, object]] = field(default_factory=list)
    # The key (snippet_keys) it was measured under, and whether it came from mutants.json.
    key: str = ""
    reused: bool = False

    @property
    def kill_rate(self) -> float | None:
        return None if self.total == 0 else self.killed / self.total


Site = tuple[str, int, object]


def _sites(tree: ast.AST) -> Iterator[Site]:
    """Mutation sites: (kind, line, node), or for a dropped statement (kind, line,
    (parent, field, index)). Walking two equal trees gives the sites in the same order."""
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if (isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAP) or (
            isinstance(node, ast.AugAssign) and type(node.op) in _BINOP_SWAP
        ):
            yield "operator", line, node
        elif isinstance(node, ast.Compare) and type(node.ops[0]) in _CMP_SWAP:
            yield "comparison", line, node
        elif isinstance(node, ast.BoolOp) and type(node.op) in _BOOL_SWAP:
            yield "boolean", line, node
        elif (
            isinstance(node, ast.Constant)
            and type(node.value) in (int, float)
            and not isinstance(node.value, bool)
        ):
            yield "constant", line, node
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            yield "negation", line, node
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            yield "swap-arguments", line, node
        elif (isinstance(node, ast.Name) and node.id in _NAME_SWAP) or (
            isinstance(node, ast.Attribute) and node.attr in _NAME_SWAP
        ):
            yield "min-max", line, node
    for parent in ast.walk(tree):
        for name in ("body", "orelse"):
            block = getattr(parent, name, None)
            if isinstance(block, list):
                for index, stmt in enumerate(block):
                    if isinstance(stmt, ast.stmt) and not isinstance(stmt, ast.Pass):
                        yield "drop-statement", stmt.lineno, (parent, name, index)


def _apply(kind: str, node: Any) -> bool:
    """Mutate ``node`` in place; False when the mutation does not apply."""
    if kind == "operator":
        node.op = _BINOP_SWAP[type(node.op)]()
    elif kind == "comparison":
        node.ops[0] = _CMP_SWAP[type(node.ops[0])]()
    elif kind == "boolean":
        node.op = _BOOL_SWAP[type(node.op)]()
    elif kind == "constant":
        value = node.value
        node.value = 1 if value == 0 else (value * 2 if isinstance(value, float) else value + 1)
    elif kind == "negation":
        return False  # handled by the parent replacement in _mutate
    elif kind == "swap-arguments":
        args = node.args
        if ast.dump(args[0]) == ast.dump(args[1]):
            return False
        args[0], args[1] = args[1], args[0]
    elif kind == "min-max":
        if isinstance(node, ast.Name):
            node.id = _NAME_SWAP[node.id]
        else:
            node.attr = _NAME_SWAP[node.attr]
    return True


class _DropUnary(ast.NodeTransformer):
    def __init__(self, target: object) -> None:
        self.target = target

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if node is self.target:
            return node.operand
        self.generic_visit(node)
        return node


def generate_mutants(body: str, limit: int = MAX_MUTANTS_PER_SNIPPET) -> list[Mutant]:
    """Distinct mutants of a snippet body (dedented code), spread over its sites."""
    source = textwrap.dedent(body)
    try:
        original = ast.parse(source)
    except SyntaxError:
        return []
    baseline = ast.unparse(original)
    sites = list(_sites(original))
    found: list[Mutant] = []
    seen = {baseline}
    for index, (kind, line, _) in enumerate(sites):
        tree = copy.deepcopy(original)
        node = list(_sites(tree))[index][2]
        if kind == "drop-statement":
            parent, block_name, position = cast(tuple[ast.AST, str, int], node)
            getattr(parent, block_name)[position] = ast.Pass()
        elif kind == "negation":
            tree = _DropUnary(node).visit(tree)
        elif not _apply(kind, node):
            continue
        try:
            code = ast.unparse(ast.fix_missing_locations(tree))
        except Exception:
            continue
        if code in seen:
            continue
        seen.add(code)
        found.append(Mutant(kind=kind, line=line, code=code + "\n"))
    if len(found) <= limit:
        return found
    # Spread the kept mutants over the kinds, then over the body, deterministically.
    by_kind: dict[str, list[Mutant]] = {}
    for mutant in found:
        by_kind.setdefault(mutant.kind, []).append(mutant)
    chosen: list[Mutant] = []
    while len(chosen) < limit:
        for kind in sorted(by_kind):
            bucket = by_kind[kind]
            if bucket and len(chosen) < limit:
                chosen.append(bucket.pop(len(bucket) // 2))
    return sorted(chosen, key=lambda m: (m.line, m.kind, m.code))


def snippet_keys(task: Task, limit: int = MAX_MUTANTS_PER_SNIPPET) -> dict[str, str]:
    """What each snippet's mutant results depend on: the files its tests run with (tag
    lines left out, so adding or moving another snippet's tags changes nothing), the env,
    the task's settings other than its snippet list, this snippet's body and its tests."""
    shared = hashlib.sha256(f"scheme {_SCHEME} limit {limit}\0".encode())
    for rel in sorted(task.sandbox_files):
        annotated = task.files.get(rel)
        data = "".join(annotated.stripped()).encode() if annotated else task.read_bytes(rel)
        shared.update(rel.encode() + b"\0" + data + b"\0")
    shared.update(b"env\0" + (task.env_dir / "requirements.txt").read_bytes())
    settings = task.config.model_dump(mode="json", exclude={"snippets"})
    shared.update(json.dumps(settings, sort_keys=True).encode() + b"\0")
    keys = {}
    for name in task.snippet_names():
        digest = shared.copy()
        digest.update("".join(task.reference_body(name)).encode() + b"\0")
        digest.update(selection_key(task.tests_for(name)).encode())
        keys[name] = digest.hexdigest()[:16]
    return keys


def mutate_task(
    task: Task,
    sandboxes: Sandboxes,
    expected: Expected,
    *,
    workers: int = 1,
    limit: int = MAX_MUTANTS_PER_SNIPPET,
    stored: dict[str, Any] | None = None,
) -> dict[str, SnippetMutants]:
    """Run every snippet's mutants against its tests.

    ``stored`` is an earlier ``mutants.json`` of this task (any version): a snippet whose
    key (:func:`snippet_keys`) is unchanged keeps its stored result instead of running again.
    """
    jobs: list[tuple[str, Mutant]] = []
    keys = snippet_keys(task, limit)
    results = {name: SnippetMutants(snippet=name, key=keys[name]) for name in keys}
    earlier = (stored or {}).get("snippets", {})
    for name in task.snippet_names():
        previous = earlier.get(name)
        if isinstance(previous, dict) and previous.get("key") == keys[name]:
            results[name] = SnippetMutants(
                snippet=name,
                total=int(previous["total"]),
                killed=int(previous["killed"]),
                survivors=list(previous.get("survivors", [])),
                key=keys[name],
                reused=True,
            )
            continue
        key = selection_key(task.tests_for(name))
        if key not in expected.ids:
            continue
        for mutant in generate_mutants("".join(task.reference_body(name)), limit):
            jobs.append((name, mutant))

    def run(job: tuple[str, Mutant]) -> TestRun:
        name, mutant = job
        return score_snippet(sandboxes, task, name, mutant.code, expected).run

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        outcomes = list(pool.map(run, jobs))
    for (name, mutant), outcome in zip(jobs, outcomes, strict=True):
        if _unsure(outcome):
            outcome = run((name, mutant))  # alone this time
        entry = results[name]
        entry.total += 1
        if outcome.status == "fail":
            entry.killed += 1
        else:
            survivor: dict[str, object] = {
                "kind": mutant.kind,
                "line": mutant.line,
                "code": mutant.code,
            }
            if outcome.status == "harness_error":
                survivor["harness_error"] = outcome.message[:200]
            entry.survivors.append(survivor)
    return results


def _unsure(outcome: TestRun) -> bool:
    """A non-pass that may be the machine's fault rather than the mutant's."""
    return outcome.status == "harness_error" or outcome.failure_class == "timeout"


def write_mutants_file(task: Task, results: dict[str, SnippetMutants]) -> Path:
    """``tasks/<id>/mutants.json``: per snippet kills, keyed by the task hash it was measured on."""
    path = task.root / MUTANTS_FILE
    data = {
        "task_sha": task.sha,
        "snippets": {
            name: {k: v for k, v in asdict(entry).items() if k != "reused"}
            | {"kill_rate": entry.kill_rate}
            for name, entry in results.items()
        },
    }
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def read_mutants_file(task: Task, *, any_version: bool = False) -> dict[str, Any] | None:
    """The stored mutant results, or None when absent or measured on another version of
    the task (``any_version``: whatever is stored, for reuse snippet by snippet)."""
    path = task.root / MUTANTS_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    return data if any_version or data.get("task_sha") == task.sha else None
