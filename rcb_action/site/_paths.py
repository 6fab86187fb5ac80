"""Where the site's templates and static assets live, and where each page goes."""

from __future__ import annotations

import os
import re
from pathlib import Path

import rcb_action
from rcb_action.errors import RcbError
from rcb_action.names import path_key

SITE_DIR_ENV = "RCB_SITE_DIR"


def site_dir() -> Path:
    """The folder of jinja2 templates and static assets: ``$RCB_SITE_DIR``, else the
    checkout's ``site/`` (it is not a Python package, so it is found next to the library).

    Raises:
        RcbError: the folder, or its ``templates/`` or ``static/``, is missing.
    """
    override = os.environ.get(SITE_DIR_ENV)
    root = Path(override) if override else Path(rcb_action.__file__).resolve().parents[1] / "site"
    where = f"${SITE_DIR_ENV}={override}" if override else str(root)
    for part in ("templates", "static"):
        if not (root / part).is_dir():
            raise RcbError(
                f"{where}: no {part}/ folder of site templates here "
                f"(run from an rcb checkout or set {SITE_DIR_ENV} to its site/ folder)"
            )
    return root


_TASK_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")


def model_slug(model: str) -> str:
    """The file name (without ``.html``) of ``model``'s page under ``models/``: a
    readable prefix and a hash of the exact name (:func:`rcb_action.names.path_key`),
    so that no other name, ``openai-gpt-4o`` for ``openai/gpt-4o`` say, can take it."""
    return path_key(model)


def task_slug(task_id: str) -> str:
    """The file name (without ``.html``) of a task's page under ``tasks/``: the task id
    itself (task ids are lower-case letters, digits, ``_`` and ``-``, so no two share a
    page), or for any other id that results may name, ``_`` and its
    :func:`rcb_action.names.path_key` (never a task id: none starts with ``_``)."""
    return task_id if _TASK_ID.fullmatch(task_id) else f"_{path_key(task_id)}"
