"""Options several sub-commands share."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_tasks_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tasks-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of task folders (default: $RCB_TASKS_DIR, else ./tasks, else the checkout's tasks/)",
    )


def add_registry(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--registry",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="extra models registry YAML (repeatable); overrides the built-in entries",
    )


def add_sandbox(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sandbox",
        choices=["local", "docker"],
        default="local",
        help="where tests run: local (bubblewrap, else a plain subprocess with a warning) or docker",
    )
