"""The layers hold by themselves: each package imports only packages below it, never
another package's private modules, and the library never imports the CLI.

The order follows the data: tasks → prompts → models → splice → sandbox → scoring →
results → report → the runs (runner, reproduce) → validate and the site → the GitHub
glue → the commands → the CLI. The crawler sits just above the tasks: it reads them to
know which papers are taken, and the commands hand it what it needs of GitHub. Imports
inside functions count too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rcb_action", "crawler")

# Low to high: a package may import the packages of lower layers, never higher or equal.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("rcb_action", "errors"),
    ("names", "paths", "text"),
    ("tasks",),
    ("papers", "importers", "crawler"),
    ("prompts",),
    ("models",),
    ("splice",),
    ("sandbox",),
    ("scoring",),
    ("agent",),
    ("results",),
    ("report",),
    ("runner",),
    ("reproduce",),
    ("validate", "site"),
    ("github",),
    ("commands",),
    ("cli",),
    ("__main__",),
)
LAYER = {name: rank for rank, names in enumerate(LAYERS) for name in names}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def unit_of(module: str) -> str | None:
    """The layered unit a dotted module belongs to: ``crawler``, ``rcb_action`` itself, or
    ``rcb_action``'s subpackage or top-level module; None outside rcb."""
    parts = module.split(".")
    if parts[0] == "crawler":
        return "crawler"
    if parts[0] != "rcb_action":
        return None
    if len(parts) == 1 or parts[1] == "__version__":
        return "rcb_action"
    return parts[1]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every import in ``tree``, ``from X import y`` giving both
    ``X`` and ``X.y`` (y may be a module); relative imports are resolved in ``package``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def violations(root: Path) -> tuple[list[Violation], int]:
    """What breaks the layering in the packages under ``root``, and how many imports
    between different units were checked."""
    found: list[Violation] = []
    checked = 0
    for top in PACKAGES:
        for path in sorted((root / top).rglob("*.py")):
            module = module_name(path, root)
            own = unit_of(module)
            assert own is not None
            if own not in LAYER:
                found.append(Violation(str(path.relative_to(root)), 1, f"'{own}' has no layer"))
                continue
            package = module if path.name == "__init__.py" else module.rpartition(".")[0]
            for line, name in imported(ast.parse(path.read_text(), str(path)), package):
                other = unit_of(name)
                if other is None or other == own:
                    continue
                checked += 1
                where = str(path.relative_to(root))
                if other not in LAYER:
                    found.append(Violation(where, line, f"imports {name}: '{other}' has no layer"))
                elif LAYER[other] >= LAYER[own]:
                    found.append(
                        Violation(where, line, f"imports {name}: '{other}' is not below '{own}'")
                    )
                private = [p for p in name.split(".")[1:] if p.startswith("_") and p[1:2] != "_"]
                if private and other != "rcb_action":
                    found.append(Violation(where, line, f"imports {name}, private to '{other}'"))
    return sorted(set(found), key=str), checked


def test_the_packages_import_only_downwards_and_only_public_names() -> None:
    found, checked = violations(ROOT)
    assert checked > 200, "the scan found too few imports to mean anything"
    assert not found, "layering broken:\n" + "\n".join(map(str, found))


def test_the_check_catches_an_upward_import_a_private_one_and_the_cli(tmp_path: Path) -> None:
    for top in PACKAGES:
        (tmp_path / top).mkdir()
        (tmp_path / top / "__init__.py").write_text("")
    for sub in ("tasks", "results", "sandbox"):
        (tmp_path / "rcb_action" / sub).mkdir()
        (tmp_path / "rcb_action" / sub / "__init__.py").write_text("")
    (tmp_path / "rcb_action" / "tasks" / "_schema.py").write_text(
        "def load():\n    from rcb_action.results import ResultStore\n"
    )
    (tmp_path / "rcb_action" / "results" / "_store.py").write_text(
        "from rcb_action.tasks._schema import load\nfrom ..tasks import x\n"
    )
    (tmp_path / "rcb_action" / "sandbox" / "_run.py").write_text("import rcb_action.cli\n")
    (tmp_path / "crawler" / "_issues.py").write_text("from rcb_action.github import client\n")

    found, _ = violations(tmp_path)

    assert sorted(str(v) for v in found) == sorted(
        [
            "crawler/_issues.py:1: imports rcb_action.github: 'github' is not below 'crawler'",
            "crawler/_issues.py:1: imports rcb_action.github.client: 'github' is not below 'crawler'",
            "rcb_action/results/_store.py:1: imports rcb_action.tasks._schema, private to 'tasks'",
            "rcb_action/results/_store.py:1: imports rcb_action.tasks._schema.load, private to 'tasks'",
            "rcb_action/sandbox/_run.py:1: imports rcb_action.cli: 'cli' is not below 'sandbox'",
            "rcb_action/tasks/_schema.py:2: imports rcb_action.results: 'results' is not below 'tasks'",
            "rcb_action/tasks/_schema.py:2: imports rcb_action.results.ResultStore: "
            "'results' is not below 'tasks'",
        ]
    )
