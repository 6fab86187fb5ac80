"""Where rcb keeps caches that outlive a run (venvs, reference runs, fetched papers)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path:
    """``$RCB_CACHE_DIR`` (default ``~/.cache/rcb``) joined with ``parts``, created."""
    root = Path(os.environ.get("RCB_CACHE_DIR") or Path.home() / ".cache" / "rcb")
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
