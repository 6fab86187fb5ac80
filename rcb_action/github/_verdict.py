"""The pull-request validation verdict: found by the read-only job, rendered and posted
by a trusted one.

The validation job runs the pull request's code, so it has no write token. It
writes the verdict as data (``verdict.json``, :mod:`._verdict_schema`: per task and
per submission a status among passed, failed and not validated, and the problems as
plain strings) into an artifact; a ``workflow_run`` job holding the write token
downloads it, checks it against the schema, checks that the pull request's head is
the commit that was validated, and renders the Markdown itself
(:func:`render_verdict`), every string escaped: nothing the pull request's run wrote
reaches the comment as Markdown.

A task that asks for a GPU, validated on a runner that has none, is *not validated*
(its reference, ``null`` and mutants never ran): the verdict says why, and is never
"ready for review".
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from rcb_action.github._verdict_schema import (
    MAX_LOG_CHARS,
    SCHEMA_VERSION,
    ItemVerdict,
    ModelScore,
    Section,
    Status,
    Verdict,
)
from rcb_action.report import Report, markdown_text

VERDICT_KEY = "validation"
# What the renderer shows of one string, one item's problems, and the items.
SHOWN_NAME_CHARS = 120
SHOWN_PROBLEM_CHARS = 500
SHOWN_PROBLEMS = 20
SHOWN_ITEMS = 100

GPU_REASON = (
    "not validated: the task requires a GPU and this runner has none, so its reference, "
    "null and mutants were not run; validate it on a GPU runner"
)
_RESULT_LINE = re.compile(r"^(?P<word>ok|FAIL)\s+(?P<name>\S+?): (?P<rest>.*)$")
_ICONS: dict[Status, str] = {
    "passed": "✅ passed",
    "failed": "❌ failed",
    "not validated": "⚠️ not validated",
}
_HEADLINES: dict[Status, str] = {
    "passed": "✅ ready for review",
    "failed": "❌ needs changes",
    "not validated": "⚠️ not validated",
}


# ---- the untrusted side: what ran, as data -------------------------------------------


def _tail(text: str, limit: int = MAX_LOG_CHARS) -> str:
    if len(text) <= limit:
        return text
    return "[… earlier output cut …]\n" + text[-limit:]


def requires_gpu(folder: Path) -> bool:
    """Whether the task in ``folder`` says ``gpu: required`` (False when unreadable:
    the validation itself reports a broken ``task.yaml``)."""
    try:
        data = yaml.safe_load((folder / "task.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(data, dict) and data.get("gpu") == "required"


def _problems_of(folder: str, log: str) -> list[str]:
    """The indented problem lines of ``log`` located inside ``folder``."""
    prefix = folder.rstrip("/") + "/"
    found = []
    for line in log.splitlines():
        if line.startswith("  ") and not line.lstrip().startswith("warning:"):
            text = line.strip()
            if text.startswith(prefix):
                found.append(text)
    return found


def task_verdicts(
    folders: list[str], status: str, log: str, *, runner_has_gpu: bool
) -> dict[str, ItemVerdict]:
    """Each task folder's verdict from ``rcb validate``'s exit ``status`` ('' when it
    did not run) and its output: ``ok NAME: ...`` passed (``..., skipped: ...`` not
    validated), ``FAIL NAME: ...`` failed. A task that requires a GPU on a runner
    without one is not validated whatever the output says."""
    results: dict[str, tuple[str, str]] = {}
    for line in log.splitlines():
        match = _RESULT_LINE.match(line)
        if match:
            results[match["name"]] = (match["word"], match["rest"])
    verdicts = {}
    for folder in folders:
        name = Path(folder).name
        problems = _problems_of(folder, log)
        word, rest = results.get(name, ("", ""))
        state: Status
        if word == "FAIL":
            state = "failed"
            problems = problems or ["rcb validate found problems (see its output)"]
        elif word == "ok" and "skipped:" in rest:
            state = "not validated"
            # "..., skipped: skipped: REASON": the reason after the last "skipped:".
            problems = [f"not validated: {rest.rsplit('skipped:', 1)[1].strip(' ,')}"]
        elif word == "ok":
            state = "passed"
        elif status.strip() == "":
            state, problems = "not validated", ["not validated: rcb validate did not run"]
        elif status.strip() != "0":
            state = "failed"
            problems = problems or [f"rcb validate stopped (exit {status.strip()}) before it"]
        else:
            state, problems = "not validated", ["not validated: no result in rcb validate's output"]
        if requires_gpu(Path(folder)) and not runner_has_gpu:
            if state == "passed":
                state, problems = "not validated", []
            if not any("requires a GPU" in p for p in problems):
                problems = [*problems, GPU_REASON]
        verdicts[folder] = ItemVerdict(status=state, problems=problems)
    return verdicts


def submission_verdicts(folders: list[str], status: str, log: str) -> dict[str, ItemVerdict]:
    """Each submission folder's verdict from the check's exit ``status`` and output."""
    verdicts = {}
    code = status.strip()
    for folder in folders:
        problems = _problems_of(folder, log)
        if code == "0":
            verdicts[folder] = ItemVerdict(status="passed")
        elif code == "":
            verdicts[folder] = ItemVerdict(
                status="not validated", problems=["not validated: the check did not run"]
            )
        elif problems or code != "1":
            why = problems or [f"the check or the scoring stopped (exit {code})"]
            verdicts[folder] = ItemVerdict(status="failed", problems=why)
        else:
            # Exit 1 names the folders with problems; the others passed their check.
            verdicts[folder] = ItemVerdict(status="passed")
    if code not in ("", "0") and all(v.status == "passed" for v in verdicts.values()):
        verdicts = {
            f: ItemVerdict(status="failed", problems=[f"the check failed (exit {code})"])
            for f in folders
        }
    return verdicts


def model_scores(report: Report | None) -> list[ModelScore]:
    """The models of the submissions' report, as plain numbers and names."""
    if report is None:
        return []
    return [
        ModelScore(
            model=name or "?",
            scaled_pass_at_1=entry.scaled_pass_at_1,
            pass_rate=entry.pass_rate,
            snippets=entry.snippets,
            harness_errors=entry.harness_errors,
        )
        for name, entry in report.models.items()
    ]


def _whole_section_problems(what: str, folders: list[str], status: str) -> list[str]:
    """A failure with no folder to pin it on: the changed-folder check itself failed."""
    code = status.strip()
    return (
        [] if folders or code in ("", "0") else [f"the {what} could not be checked (exit {code})"]
    )


def build_verdict(
    *,
    pull: int,
    head_sha: str,
    tasks: list[str],
    validate_status: str,
    validate_log: str,
    submissions: list[str],
    submissions_status: str,
    submissions_report: Report | None,
    submissions_log: str = "",
    runner_has_gpu: bool = False,
) -> Verdict:
    """The verdict of one validation run, as data (the validation job's side)."""
    task_section = Section(
        items=task_verdicts(tasks, validate_status, validate_log, runner_has_gpu=runner_has_gpu),
        problems=_whole_section_problems("changed tasks", tasks, validate_status),
        log=_tail(validate_log) if validate_log.strip() else "",
    )
    sub_section = Section(
        items=submission_verdicts(submissions, submissions_status, submissions_log),
        problems=_whole_section_problems("submissions", submissions, submissions_status),
        log=_tail(submissions_log) if submissions_log.strip() else "",
    )
    return Verdict(
        schema_version=SCHEMA_VERSION,
        pull=pull,
        head_sha=head_sha,
        tasks=task_section,
        submissions=sub_section,
        scores=model_scores(submissions_report),
    )


# ---- the trusted side: the comment, every string escaped -----------------------------


def fenced(text: str) -> str:
    """``text`` in a code fence no line of it can close (its content stays text)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text.rstrip()}\n{fence}\n"


def shown(text: str, limit: int) -> str:
    """``text`` clipped to ``limit`` characters, then escaped
    (:func:`rcb_action.report.markdown_text`): one inert line."""
    if len(text) > limit:
        text = text[:limit] + " [… cut]"
    return markdown_text(text)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def _section(title: str, section: Section, summary: str) -> list[str]:
    state = section.status
    parts = [f"**{title}**: {_ICONS[state] if state else 'nothing to check'}.", ""]
    for problem in section.problems[:SHOWN_PROBLEMS]:
        parts.append(f"- {shown(problem, SHOWN_PROBLEM_CHARS)}")
    items = list(section.items.items())
    for name, item in items[:SHOWN_ITEMS]:
        parts.append(f"- {shown(name, SHOWN_NAME_CHARS)}: {_ICONS[item.status]}")
        for problem in item.problems[:SHOWN_PROBLEMS]:
            parts.append(f"  - {shown(problem, SHOWN_PROBLEM_CHARS)}")
        if len(item.problems) > SHOWN_PROBLEMS:
            parts.append(f"  - and {len(item.problems) - SHOWN_PROBLEMS} more")
    if len(items) > SHOWN_ITEMS:
        parts.append(f"- and {len(items) - SHOWN_ITEMS} more")
    if section.problems or items:
        parts.append("")
    if section.log.strip():
        parts += [
            f"<details><summary>{summary}</summary>",
            "",
            fenced(_tail(section.log)),
            "</details>",
            "",
        ]
    return parts


def _scores(scores: list[ModelScore]) -> list[str]:
    lines = [
        "| Model | Scaled pass@1 | Pass rate | Snippets | Harness errors |",
        "| --- | --- | --- | --- | --- |",
    ]
    ranked = sorted(scores, key=lambda s: (-(s.scaled_pass_at_1 or -1.0), s.model))
    for s in ranked[:SHOWN_ITEMS]:
        lines.append(
            f"| {shown(s.model, SHOWN_NAME_CHARS)} | {_pct(s.scaled_pass_at_1)} | "
            f"{_pct(s.pass_rate)} | {s.snippets} | {s.harness_errors} |"
        )
    return [*lines, ""]


def render_verdict(verdict: Verdict, *, run_url: str = "") -> str:
    """The verdict comment as Markdown, from a checked :class:`Verdict` (the trusted
    job's side). Task ids, folder names, model names and problems are clipped and
    escaped, logs are fenced: nothing in ``verdict.json`` can add a line, a heading,
    HTML, a mention, a marker or a second verdict. ``run_url`` comes from the trusted
    event, never from the verdict."""
    status = verdict.status
    parts = [f"### rcb: pull-request validation: {_HEADLINES[status]}", ""]
    if status == "not validated":
        parts += [
            "Some of the changes could not be validated on this runner (see below): a "
            "maintainer must validate them where they can run before merging.",
            "",
        ]
    if verdict.tasks.status is not None:
        parts += _section(
            "Tasks (checked in the Docker sandbox: schema, tags, reference passes, `null` "
            "fails, mutants killed, time per task)",
            verdict.tasks,
            "rcb validate output",
        )
    if verdict.submissions.status is not None:
        parts += _section("Model submissions", verdict.submissions, "check output")
        if verdict.scores:
            parts += _scores(verdict.scores)
    if verdict.tasks.status is None and verdict.submissions.status is None:
        parts += ["No task or submission folder changed: nothing to validate.", ""]
    if run_url and re.fullmatch(r"https://[A-Za-z0-9.-]+/[A-Za-z0-9._/-]+", run_url):
        parts.append(f"[Validation run]({run_url})")
    return "\n".join(parts) + "\n"
