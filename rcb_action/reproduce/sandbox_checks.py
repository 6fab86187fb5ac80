"""rcb's stage checks, run inside the sandbox (copied there read-only; standard library only).

    python sandbox_checks.py env requirements.txt   # with .venv/bin/python
    python sandbox_checks.py code reproduce.sh      # with .venv/bin/python
    python sandbox_checks.py files                  # with python3

Each prints one JSON object on stdout. Nothing here imports or runs the agent's code:
``code`` compiles the files and looks imports up without executing them.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import os
import re
import sys

SKIPPED_DIRS = {".venv", "__pycache__", ".git", ".rcb", "node_modules"}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


def walk(root: str = "."):
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = os.path.relpath(os.path.join(folder, name), root)
            if not os.path.islink(os.path.join(folder, name)):
                yield path


def requirements(path: str) -> list[tuple[str, str | None]]:
    """(name, pinned version or None) for each named requirement."""
    out = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("-"):
                continue
            match = _NAME.match(line)
            if not match:
                continue
            spec = match[3].split(";", 1)[0].strip()
            pin = re.fullmatch(r"==\s*([^\s,]+)", spec)
            out.append((match[1], pin[1] if pin else None))
    return out


def check_env(path: str) -> dict:
    errors = []
    installed = {}
    if not os.path.isfile(path):
        return {"ok": False, "errors": [f"{path} not found"], "installed": {}}
    for name, pin in requirements(path):
        try:
            version = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            errors.append(f"{name} is not installed in .venv")
            continue
        installed[name] = version
        # PEP 440: a pin without a local label matches any local build of that version
        # (==2.13.0 is met by 2.13.0+cpu).
        if pin is not None and version != pin and ("+" in pin or version.split("+")[0] != pin):
            errors.append(f"{name} {version} is installed; requirements.txt pins {pin}")
    return {"ok": not errors, "errors": errors, "installed": installed}


def _optional_imports(tree: ast.AST) -> set[int]:
    """Imports inside try blocks or under ``if TYPE_CHECKING``: allowed to be missing."""
    optional: set[int] = set()
    for node in ast.walk(tree):
        guarded = isinstance(node, ast.Try) or (
            isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test)
        )
        for statement in node.body if guarded else []:  # type: ignore[attr-defined]
            for inner in ast.walk(statement):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    optional.add(id(inner))
    return optional


def check_code(entry: str) -> dict:
    errors = []
    if not os.path.isfile(entry):
        errors.append(f"the entry point {entry} is missing")
    files = [p for p in walk() if p.endswith(".py")]
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
            tree = ast.parse(source, path)
            compile(tree, path, "exec")
        except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
            line = getattr(exc, "lineno", None)
            errors.append(
                f"{path}:{line or '?'}: does not compile: {exc.__class__.__name__}: {exc}"
            )
            continue
        optional = _optional_imports(tree)
        here = os.path.dirname(os.path.abspath(path))
        for node in ast.walk(tree):
            if id(node) in optional:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                sys.path[:0] = [here, os.getcwd()]
                try:
                    found = importlib.util.find_spec(top) is not None
                except (ImportError, ValueError):
                    found = False
                finally:
                    del sys.path[:2]
                if not found:
                    errors.append(f"{path}:{node.lineno}: import {name}: no module named '{top}'")
    return {"ok": not errors, "errors": errors, "files": files}


def list_files() -> dict:
    return {"files": [[p, os.path.getsize(p)] for p in walk()]}


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else ""
    if command == "env":
        result = check_env(argv[2])
    elif command == "code":
        result = check_code(argv[2])
    elif command == "files":
        result = list_files()
    else:
        print(json.dumps({"ok": False, "errors": [f"unknown check {command!r}"]}))
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
