"""Whole reports from the few fields a test cares about (the rest: an empty run's values)."""

from __future__ import annotations

import copy
from typing import Any

from rcb_action.report import SCHEMA_VERSION, Report

SUMMARY: dict[str, Any] = {
    "scaled_pass_at_1": None,
    "pass_rate": None,
    "ci95": None,
    "snippets": 0,
    "weighted_lines": 0,
    "samples": 0,
}

ENTRY: dict[str, Any] = {
    **SUMMARY,
    "display_name": "",
    "provider": "rcb",
    "knowledge_cutoff": None,
    "cutoff_declared": False,
    "paper": True,
    "macro_task_mean": None,
    "pass_at_k": {},
    "tasks": {},
    "forgeable_snippets": 0,
    "outcomes": [],
    "failure_classes": {},
    "harness_errors": 0,
    "skipped": 0,
    "skip_reasons": [],
    "paper_truncated": 0,
    "cost_usd": 0.0,
    "tokens_in": 0,
    "tokens_out": 0,
    "batched": 0,
    "post_cutoff": {**SUMMARY, "cutoff": None, "declared": False, "note": None, "tasks": []},
    "prompt_cache": {"tokens_in": 0, "tokens_cached": 0, "cost_saved_usd": 0.0},
}

TASK: dict[str, Any] = {
    "scaled_pass_at_1": None,
    "pass_rate": None,
    "weight": 0.0,
    "grading": "cases",
}


def report_data(partial: dict[str, Any]) -> dict[str, Any]:
    """``partial`` (``models`` entries may give only some fields, tasks too) as a whole
    report's plain data, as ``report.json`` holds it."""
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "rcb_version": "0.0.test",
        "source": "",
        "records": 0,
        "task_shas": {},
        "tasks_sha": "",
        "papers": {},
        "comparisons": [],
        **copy.deepcopy(partial),
    }
    models = {}
    for name, entry in data.get("models", {}).items():
        full = {**copy.deepcopy(ENTRY), "display_name": name, **entry}
        full["tasks"] = {t: {**TASK, **score} for t, score in full["tasks"].items()}
        full["post_cutoff"] = {**ENTRY["post_cutoff"], **full["post_cutoff"]}
        models[name] = full
    data["models"] = models
    if not partial.get("task_shas"):
        tasks = {t for entry in models.values() for t in entry["tasks"]}
        data["task_shas"] = dict.fromkeys(sorted(tasks), "same")
    return data


def report_of(partial: dict[str, Any]) -> Report:
    """``partial`` as a :class:`Report` (see :func:`report_data`)."""
    return Report.from_data(report_data(partial))
