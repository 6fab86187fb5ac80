"""Where the site's templates and static assets live."""

from __future__ import annotations

import os
from pathlib import Path

import rcb_action
from rcb_action.errors import RcbError

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
