"""The live subset: every report restricts to papers after each model's cutoff, and to the
papers after every listed model's cutoff, so a model is judged on work it cannot have read."""

from __future__ import annotations

import datetime as dt
import json

import yaml

from rcb_action.results import RESULTS_FILE, Record

# Three papers, two models whose cutoffs fall between them, and a model with no cutoff.
PAPERS = {
    "early": dt.date(2025, 1, 10),
    "middle": dt.date(2025, 5, 10),
    "late": dt.date(2025, 9, 10),
}
CUTOFFS = {"test/model-a": dt.date(2025, 3, 1), "test/model-b": dt.date(2025, 7, 1)}
WEIGHTS = {"early": 4, "middle": 2, "late": 3}
# Which snippets each model passes (one snippet per paper).
PASSES = {
    "test/model-a": {"early", "late"},
    "test/model-b": {"early", "middle"},
    "test/model-c": {"middle", "late"},
}


def _record(model: str, task: str, *, paper: bool = True) -> Record:
    passed = task in PASSES[model]
    return Record(
        task=task,
        snippet="only",
        model=model,
        paper=paper,
        task_sha="t" * 8,
        prompt_sha="p" * 8,
        weight=WEIGHTS[task],
        published=PAPERS[task],
        status="pass" if passed else "fail",
        failure_class=None if passed else "assertion",
        tests_expected=1,
        tests_ran=1,
        tests_passed=int(passed),
    )


def _scaled(model: str, tasks: set[str]) -> float:
    """Scaled pass@1 by its definition: passed weight over all weight, in percent."""
    total = sum(WEIGHTS[t] for t in tasks)
    return round(100 * sum(WEIGHTS[t] for t in tasks & PASSES[model]) / total, 2)


def _write(tmp_path, records):
    out = tmp_path / "results"
    out.mkdir()
    (out / RESULTS_FILE).write_text("".join(r.model_dump_json() + "\n" for r in records))
    registry = tmp_path / "registry.yaml"
    models = {
        name: {"display_name": name, "provider": "test", "knowledge_cutoff": cutoff}
        for name, cutoff in CUTOFFS.items()
    }
    models["test/model-c"] = {"display_name": "no cutoff known", "provider": "test"}
    registry.write_text(yaml.safe_dump({"models": models}))
    return out, registry


def _after(cutoff: dt.date | None) -> set[str]:
    return {t for t, published in PAPERS.items() if cutoff is None or published > cutoff}


def test_report_scores_each_model_on_papers_after_its_cutoff(cli, tmp_path):
    records = [_record(m, t) for m in PASSES for t in PAPERS]
    out, registry = _write(tmp_path, records)
    code, stdout, err = cli(
        "report", out, "--json", tmp_path / "r.json", "--markdown", tmp_path / "r.md",
        "--registry", registry,
    )  # fmt: skip
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())

    for model, cutoff in CUTOFFS.items():
        post = report["models"][model]["post_cutoff"]
        assert post["cutoff"] == cutoff.isoformat()
        assert set(post["tasks"]) == _after(cutoff)
        assert post["scaled_pass_at_1"] == _scaled(model, _after(cutoff))
        assert post["snippets"] == len(_after(cutoff))
    unknown = report["models"]["test/model-c"]["post_cutoff"]
    assert unknown["cutoff"] is None and "no knowledge cutoff" in unknown["note"]
    assert set(unknown["tasks"]) == set(PAPERS)

    # The subset after every known cutoff: only the late paper, scored for every model.
    common = report["common_post_cutoff"]
    latest = max(CUTOFFS.values())
    assert common["after"] == latest.isoformat()
    assert set(common["tasks"]) == _after(latest)
    for model in PASSES:
        assert common["models"][model]["scaled_pass_at_1"] == _scaled(model, _after(latest))
    # A model whose cutoff is unknown cannot be vouched for: the report says so.
    assert common["models_without_cutoff"] == ["test/model-c"]

    # The terminal report and the Markdown both show both subsets.
    assert "Post-cutoff" in stdout and f"papers after {latest}" in stdout
    markdown = (tmp_path / "r.md").read_text()
    assert "Post-cutoff" in markdown and f"papers after {latest}" in markdown


def test_common_subset_uses_the_same_attempts_as_the_headline(cli, tmp_path):
    """A model run only without the paper is scored on those runs in both places."""
    records = [_record("test/model-a", t, paper=False) for t in PAPERS]
    records += [_record("test/model-b", t) for t in PAPERS]
    out, registry = _write(tmp_path, records)
    code, _, err = cli(
        "report", out, "--json", tmp_path / "r.json", "--registry", registry, "--quiet"
    )
    assert code == 0, err
    report = json.loads((tmp_path / "r.json").read_text())
    latest = max(CUTOFFS.values())
    entry = report["models"]["test/model-a"]
    assert entry["paper"] is False
    assert entry["post_cutoff"]["snippets"] == len(_after(CUTOFFS["test/model-a"]))
    common = report["common_post_cutoff"]["models"]["test/model-a"]
    assert common["snippets"] == len(_after(latest))
    assert common["scaled_pass_at_1"] == _scaled("test/model-a", _after(latest))
