"""The ``rcb`` command line.

Each sub-command lives in its own module under :mod:`rcb_action.commands` and is
found automatically: a module there defines ``ORDER`` (its place in ``--help``),
``register(subparsers)`` and a handler set with ``set_defaults(handler=...)``.
Heavy imports happen inside handlers, so ``rcb --help`` is instant.

Exit codes: 0 done; 1 the run finished but a threshold was missed or validation
found problems; 2 a usage or input error, with one line saying what to fix;
130 interrupted (every finished attempt is saved; rerun to resume).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import signal
import sys
import threading
from collections.abc import Sequence

from rcb_action import __version__, commands
from rcb_action.errors import RcbError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rcb",
        description="rcb: can a model turn a research paper into working code? "
        "Score models on snippets of real papers' code, in sandboxes.",
        epilog="Start with: rcb evaluate --model reference   (no API key needed). "
        "Exit codes: 0 done, 1 threshold missed or validation problems, 2 usage or input error.",
    )
    parser.add_argument("--version", action="version", version=f"rcb {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [
        importlib.import_module(f"{commands.__name__}.{m.name}")
        for m in pkgutil.iter_modules(commands.__path__)
        if not m.name.startswith("_")
    ]
    for module in sorted(modules, key=lambda m: (getattr(m, "ORDER", 99), m.__name__)):
        module.register(subparsers)
    return parser


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    # A cancelled CI job sends SIGTERM: take the same clean path as Ctrl-C
    # (sandboxes removed, finished work kept).
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        return _run(argv)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return int(handler(args) or 0)
    except RcbError as exc:
        print(f"rcb: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rcb: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
