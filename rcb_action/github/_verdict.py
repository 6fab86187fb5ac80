"""The pull-request validation verdict: made by the read-only job, posted by a trusted one.

The validation job runs the pull request's code, so it has no write token. It
writes the verdict (``comment.md``) and the pull request it is about
(``pull.json``) into an artifact; a ``workflow_run`` job holding the write token
downloads it and posts it, after checking that the pull request's head is the
commit that was validated.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rcb_action.errors import RcbError
from rcb_action.github._markdown import score_table
from rcb_action.report import markdown_text

COMMENT_FILE = "comment.md"
PULL_FILE = "pull.json"
VERDICT_KEY = "validation"
MAX_LOG_CHARS = 20_000


@dataclass(frozen=True)
class PullRef:
    """The pull request a verdict is about, and the commit that was validated."""

    number: int
    head_sha: str


def read_pull_file(path: Path) -> PullRef:
    """Read ``pull.json`` (untrusted: it comes from a run of the pull request's code).

    Raises:
        RcbError: malformed.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RcbError(f"{path}: cannot read the pull request reference ({exc})") from None
    number = data.get("number") if isinstance(data, dict) else None
    sha = data.get("head_sha") if isinstance(data, dict) else None
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise RcbError(f"{path}: 'number' must be a positive integer")
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise RcbError(f"{path}: 'head_sha' must be a 40-hex commit id")
    return PullRef(number, sha)


def fenced(text: str) -> str:
    """``text`` in a code fence no line of it can close (its content stays text)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}\n"


def _tail(text: str, limit: int = MAX_LOG_CHARS) -> str:
    if len(text) <= limit:
        return text
    return "[… earlier output cut …]\n" + text[-limit:]


def _status(code: str) -> tuple[bool | None, str]:
    code = code.strip()
    if code == "":
        return None, "not run (nothing changed)"
    if code == "0":
        return True, "✅ passed"
    if code == "1":
        return False, "❌ problems found"
    return False, f"❌ could not run (exit {code})"


def render_verdict(
    *,
    tasks: list[str],
    validate_status: str,
    validate_log: str,
    submissions: list[str],
    submissions_status: str,
    submissions_report: dict[str, Any] | None,
    submissions_log: str = "",
    run_url: str = "",
) -> tuple[bool, str]:
    """(all passed, the verdict as Markdown).

    Folder names and the submissions' model names are escaped
    (:func:`rcb_action.report.markdown_text`) and logs are fenced: nothing a pull
    request names can add a line, a heading or a second verdict."""
    ok_tasks, tasks_text = _status(validate_status)
    ok_subs, subs_text = _status(submissions_status)
    passed = ok_tasks is not False and ok_subs is not False
    headline = "✅ ready for review" if passed else "❌ needs changes"
    parts = [f"### rcb: pull-request validation: {headline}", ""]
    if tasks or ok_tasks is not None:
        listed = ", ".join(map(markdown_text, tasks)) or "none found"
        parts += [
            f"**Tasks** ({listed}): {tasks_text}. Checked in the Docker sandbox: schema, tags, "
            "reference passes, `null` fails, mutants killed, time per task.",
            "",
        ]
        if validate_log.strip():
            parts += [
                "<details><summary>rcb validate output</summary>",
                "",
                fenced(_tail(validate_log)),
                "</details>",
                "",
            ]
    if submissions or ok_subs is not None:
        listed = ", ".join(map(markdown_text, submissions)) or "none found"
        parts += [f"**Model submissions** ({listed}): {subs_text}.", ""]
        if submissions_report is not None:
            parts += [score_table(submissions_report), ""]
        if submissions_log.strip():
            parts += [
                "<details><summary>check output</summary>",
                "",
                fenced(_tail(submissions_log)),
                "</details>",
                "",
            ]
    if not tasks and not submissions and ok_tasks is None and ok_subs is None:
        parts += ["No task or submission folder changed: nothing to validate.", ""]
    if run_url:
        parts.append(f"[Validation run]({run_url})")
    return passed, "\n".join(parts) + "\n"
