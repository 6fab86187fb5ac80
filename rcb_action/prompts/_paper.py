"""The paper text given to the model: ``paper.md``, or arXiv's HTML full text, cached."""

from __future__ import annotations

import html
import re
import urllib.request

from rcb_action.errors import TaskError
from rcb_action.paths import cache_dir
from rcb_action.tasks import Task

_TAGS = re.compile(r"<(script|style)\b.*?</\1>|<[^>]+>", re.S | re.I)


def _html_to_text(page: str) -> str:
    text = html.unescape(_TAGS.sub(" ", page))
    paragraphs = [" ".join(chunk.split()) for chunk in re.split(r"\n\s*\n", text)]
    return "\n\n".join(p for p in paragraphs if p) + "\n"


def paper_text(task: Task) -> str:
    """The paper for ``task``.

    ``paper: {source: arxiv}`` fetches ``https://arxiv.org/html/<id>`` once and caches
    it under ``$RCB_CACHE_DIR/papers``; offline, it falls back to ``paper.md``.

    Raises:
        TaskError: when no text can be had (offline, nothing cached, no paper.md).
    """
    local = task.paper_path()
    if task.config.paper.source == "local":
        return local.read_text(encoding="utf-8")
    cached = cache_dir("papers") / f"{task.config.arxiv}.md"
    if cached.is_file():
        return cached.read_text(encoding="utf-8")
    try:
        url = f"https://arxiv.org/html/{task.config.arxiv}"
        with urllib.request.urlopen(url, timeout=30) as response:
            text = _html_to_text(response.read().decode("utf-8", "replace"))
        cached.write_text(text, encoding="utf-8")
        return text
    except OSError as exc:
        if local.is_file():
            return local.read_text(encoding="utf-8")
        raise TaskError(
            f"{task.root / 'task.yaml'}: key 'paper': could not fetch arXiv {task.config.arxiv} "
            f"({exc}) and there is no paper.md to fall back on"
        ) from None
