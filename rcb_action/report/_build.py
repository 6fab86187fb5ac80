"""Turn records into the report: per model scores, intervals, tasks, failures, contamination."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

from rcb_action import __version__
from rcb_action.models import DECLARED_NOTE, Registry
from rcb_action.report._schema import SCHEMA_VERSION, Report
from rcb_action.results import Record
from rcb_action.scoring import (
    Outcome,
    bootstrap_ci,
    macro_task_mean,
    paired_bootstrap,
    pass_at_k,
    pass_rate,
    per_task,
    scaled_pass_at_1,
)

IN_PROCESS = "in-process"
FORGEABLE_LABEL = "in-process tests (forgeable)"


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def outcomes_of(records: Iterable[Record]) -> list[Outcome]:
    return [Outcome(r.task, r.snippet, r.sample, r.weight, r.passed) for r in records if r.scored]


class Dated(Protocol):
    """Anything about a paper with its first-posted date: attempt records of either track."""

    @property
    def published(self) -> dt.date: ...


DatedRecord = TypeVar("DatedRecord", bound=Dated)


def post_cutoff(records: Iterable[DatedRecord], cutoff: dt.date | None) -> list[DatedRecord]:
    """Records of papers first posted after ``cutoff`` (a model cannot have read them);
    all of them when the cutoff is not known."""
    if cutoff is None:
        return list(records)
    return [r for r in records if r.published > cutoff]


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    """Scores of one set of attempts."""
    outcomes = outcomes_of(records)
    ci = bootstrap_ci(outcomes)
    return {
        "scaled_pass_at_1": _round(scaled_pass_at_1(outcomes)),
        "pass_rate": _round(pass_rate(outcomes)),
        "ci95": list(ci) if ci else None,
        "snippets": len({(o.task, o.snippet) for o in outcomes}),
        "weighted_lines": sum({(o.task, o.snippet): o.weight for o in outcomes}.values()),
        "samples": len({o.sample for o in outcomes}),
    }


def _split(records: Sequence[Record]) -> tuple[list[Record], list[Record], list[Record], bool]:
    """(with paper, without paper, the attempts the headline scores, whether they had the paper).

    Attempts given the task's notes instead of the paper (``--paper notes``) are in
    neither: they are reported apart (:func:`_notes`) and never make a headline.
    """
    main = [r for r in records if r.paper == "with" and r.agent_turns == 0]
    no_paper = [r for r in records if r.paper == "without" and r.agent_turns == 0]
    return (main, no_paper, main, True) if main else (main, no_paper, no_paper, False)


def _notes(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.paper == "notes" and r.agent_turns == 0]


def prompt_cache(records: Iterable[Record]) -> dict[str, Any]:
    """What the provider's prompt cache served, over every attempt: input tokens, those
    read from the cache, and the cost that saved (net of cache-write surcharges)."""
    chosen = list(records)
    return {
        "tokens_in": sum(r.tokens_in for r in chosen),
        "tokens_cached": sum(r.tokens_cached for r in chosen),
        "cost_saved_usd": round(sum(r.cost_saved_usd for r in chosen), 6),
    }


def paper_shas(records: Iterable[Record]) -> dict[str, dict[str, Any]]:
    """Per task, the sha256 of the paper text its prompts carried (``paper_sha``): the
    latest record's, and every distinct one when the text changed between runs."""
    seen: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if record.paper == "with" and record.paper_sha:
            if record.paper_sha in seen[record.task]:
                seen[record.task].remove(record.paper_sha)
            seen[record.task].append(record.paper_sha)
    return {
        task: {"paper_sha": shas[-1], **({"paper_shas": sorted(shas)} if len(shas) > 1 else {})}
        for task, shas in sorted(seen.items())
    }


def agent_mode(records: Sequence[Record]) -> dict[str, dict[str, Any]]:
    """Per K of ``rcb evaluate --agent-turns K``: pass@1 against pass-after-K on the same
    attempts (each refined attempt beside its own first answer)."""
    firsts = {(r.task, r.snippet, r.sample, r.paper): r for r in records if r.agent_turns == 0}
    by_k: dict[int, list[tuple[Record, Record]]] = defaultdict(list)
    for record in records:
        first = firsts.get((record.task, record.snippet, record.sample, record.paper))
        if record.agent_turns and first is not None and first.scored and record.scored:
            by_k[record.agent_turns].append((first, record))
    out: dict[str, dict[str, Any]] = {}
    for k, pairs in sorted(by_k.items()):
        before = summarize([a for a, _ in pairs])
        after = summarize([b for _, b in pairs])
        turns = [int(getattr(b, "turns_used", 0) or 0) for _, b in pairs]
        out[str(k)] = {
            "attempts": len(pairs),
            "snippets": after["snippets"],
            "scaled_pass_at_1": before["scaled_pass_at_1"],
            "scaled_pass_after_k": after["scaled_pass_at_1"],
            "pass_rate_at_1": before["pass_rate"],
            "pass_rate_after_k": after["pass_rate"],
            "fixed": sum(1 for a, b in pairs if not a.passed and b.passed),
            "broken": sum(1 for a, b in pairs if a.passed and not b.passed),
            "mean_turns_used": _round(sum(turns) / len(turns)) if turns else None,
        }
    return out


def task_grading(records: Iterable[Record]) -> dict[str, str]:
    """How each task's verdicts were reached in ``records`` (the scored ones): ``cases``
    when every one came from the separate check sandbox, else ``in-process`` (pytest
    imported the model's code, so a pass can be forged)."""
    grading: dict[str, str] = {}
    for record in records:
        if record.scored and grading.get(record.task) != IN_PROCESS:
            grading[record.task] = record.grading
    return grading


def forgeable_snippets(records: Iterable[Record]) -> int:
    """Snippets whose scored attempts were graded in-process (see :func:`task_grading`)."""
    return len({(r.task, r.snippet) for r in records if r.scored and r.grading == IN_PROCESS})


def _model_entry(name: str, records: list[Record], registry: Registry) -> dict[str, Any]:
    info = registry.get(name)
    declared = registry.declared_cutoff(name)
    # A declared cutoff still gives the model's own post-cutoff subset, labelled as such;
    # it never enters the subset common to every model (see build_report).
    cutoff = registry.cutoff(name) or declared
    _, no_paper, primary, paper_flag = _split(records)
    outcomes = outcomes_of(primary)
    grading = task_grading(primary)
    entry: dict[str, Any] = {
        "display_name": info.display_name if info else name,
        "provider": info.provider if info else (name.split("/")[0] if "/" in name else "rcb"),
        "knowledge_cutoff": cutoff.isoformat() if cutoff else None,
        "cutoff_declared": declared is not None,
        "paper": paper_flag,
        **summarize(primary),
        "macro_task_mean": _round(macro_task_mean(outcomes)),
        "pass_at_k": {},
        "tasks": {
            t: {**{k: _round(v) for k, v in s.items()}, "grading": grading.get(t, IN_PROCESS)}
            for t, s in per_task(outcomes).items()
        },
        "forgeable_snippets": forgeable_snippets(primary),
        # Every scored attempt, [task, snippet, sample, weight, passed]: what a paired
        # comparison with another report of the same tasks resamples.
        "outcomes": sorted(
            [o.task, o.snippet, o.sample, o.weight, int(o.passed)] for o in outcomes
        ),
        "failure_classes": dict(
            sorted(
                Counter(r.failure_class or "unknown" for r in primary if r.status == "fail").items()
            )
        ),
        "harness_errors": sum(1 for r in primary if r.status == "harness_error"),
        "skipped": sum(1 for r in primary if r.status == "skipped"),
        "skip_reasons": sorted({r.message for r in primary if r.status == "skipped"}),
        "paper_truncated": sum(1 for r in primary if r.paper_truncated),
        "cost_usd": round(sum(r.cost_usd for r in primary), 6),
        "tokens_in": sum(r.tokens_in for r in primary),
        "tokens_out": sum(r.tokens_out for r in primary),
        # Answers that came through the provider's batch API (rcb evaluate --batch).
        "batched": sum(1 for r in primary if getattr(r, "batch_id", None)),
    }
    samples = entry["samples"]
    for k in sorted({1, 5, 10, samples} - {0}):
        if k <= samples:
            entry["pass_at_k"][str(k)] = _round(pass_at_k(outcomes, k))
    later = post_cutoff(primary, cutoff)
    note = None if cutoff else "no knowledge cutoff known: every task counts"
    if declared is not None:
        note = f"knowledge cutoff {DECLARED_NOTE}: not checked by rcb"
    entry["post_cutoff"] = {
        "cutoff": cutoff.isoformat() if cutoff else None,
        "declared": declared is not None,
        "note": note,
        **summarize(later),
        "tasks": sorted({r.task for r in later if r.scored}),
    }
    if paper_flag and no_paper:
        entry["no_paper"] = summarize(no_paper)
    notes = _notes(records)
    if notes:
        # The notes instead of the paper: a condition of its own, never the headline.
        entry["notes"] = summarize(notes)
    entry["prompt_cache"] = prompt_cache(records)
    refined = agent_mode(records)
    if refined:
        entry["agent_mode"] = refined
    return entry


def task_set(records: Sequence[Record]) -> dict[str, Any]:
    """``task_shas`` (each task's hash, as the records were scored on it; "mixed" when its
    records disagree) and ``tasks_sha``, one hash of them all: two reports scored the same
    benchmark exactly when their ``tasks_sha`` agree."""
    seen: dict[str, set[str]] = defaultdict(set)
    for record in records:
        seen[record.task].add(record.task_sha)
    shas = {task: next(iter(s)) if len(s) == 1 else "mixed" for task, s in sorted(seen.items())}
    digest = hashlib.sha256(json.dumps(shas, sort_keys=True).encode()).hexdigest()[:16]
    return {"task_shas": shas, "tasks_sha": digest}


def build_report(records: Sequence[Record], registry: Registry, *, source: str = "") -> Report:
    """The report (what ``--json`` writes, :meth:`Report.to_json`).

    Per model: scaled pass@1 with its 95% bootstrap interval, the unweighted pass
    rate, per-task scores and their macro mean, pass@k, failure classes, cost, and
    the same scores on the post-cutoff subset; the no-paper ablation and the
    notes-instead-of-paper condition when run, each apart; what the provider's
    prompt cache saved; and per task the ``paper_sha`` of the paper text given.
    Harness errors and skips are counted apart and never scored.
    """
    by_model: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_model[record.model].append(record)
    models = {name: _model_entry(name, recs, registry) for name, recs in sorted(by_model.items())}
    report: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "source": source,
        "rcb_version": __version__,
        "records": len(records),
        **task_set(records),
        "models": models,
        "papers": paper_shas(records),
    }

    cutoffs = [registry.cutoff(m) for m in models]
    known = [c for c in cutoffs if c is not None]
    if known:
        after = max(known)
        common: dict[str, Any] = {"after": after.isoformat(), "models": {}}
        for name, recs in by_model.items():
            # The same attempts as the model's headline score, restricted to the subset.
            subset = [r for r in _split(recs)[2] if r.published > after]
            common["models"][name] = summarize(subset)
        common["tasks"] = sorted({r.task for r in records if r.published > after})
        # Models with no known cutoff may have read these papers: say which. A cutoff
        # the submitter declared is not known to rcb: it is listed here too, and apart.
        common["models_without_cutoff"] = sorted(
            m for m, c in zip(models, cutoffs, strict=True) if c is None
        )
        common["models_with_declared_cutoff"] = sorted(
            m for m in models if registry.declared_cutoff(m) is not None
        )
        report["common_post_cutoff"] = common

    ranked = sorted(
        (n for n in models if models[n]["scaled_pass_at_1"] is not None),
        key=lambda n: -(models[n]["scaled_pass_at_1"] or 0),
    )
    comparisons = []
    if len(ranked) > 1:
        top = ranked[0]
        top_outcomes = outcomes_of(r for r in by_model[top] if r.with_paper and r.agent_turns == 0)
        for other in ranked[1:]:
            other_outcomes = outcomes_of(
                r for r in by_model[other] if r.with_paper and r.agent_turns == 0
            )
            paired = paired_bootstrap(top_outcomes, other_outcomes)
            if paired:
                comparisons.append({"a": top, "b": other, **paired})
    report["comparisons"] = comparisons
    return Report.model_validate(report)
