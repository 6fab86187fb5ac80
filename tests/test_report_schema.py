"""report.json has one typed, versioned model; what does not fit it is refused in one line."""

from __future__ import annotations

import copy
import datetime as dt
import io
import json
from pathlib import Path

import pytest
from report_data import report_data
from rich.console import Console

from rcb_action.errors import RcbError
from rcb_action.github import compare_reports, load_report, render_comment, score_table
from rcb_action.models import load_registry
from rcb_action.report import (
    SCHEMA_VERSION,
    Report,
    build_report,
    print_report,
    render_markdown,
    report_schema,
)
from rcb_action.results import Record

ROOT = Path(__file__).resolve().parents[1]


def record(model: str, task: str, snippet: str, passed: bool, **fields: object) -> Record:
    values: dict[str, object] = {
        "task": task,
        "snippet": snippet,
        "model": model,
        "task_sha": f"sha-{task}",
        "prompt_sha": f"p-{task}-{snippet}",
        "weight": 3,
        "published": dt.date(2025, 6, 1),
        "status": "pass" if passed else "fail",
        "failure_class": None if passed else "wrong_output",
        "created_at": "2026-01-01T00:00:00+00:00",
        **fields,
    }
    return Record.model_validate(values)


@pytest.fixture
def report() -> Report:
    records = [
        record(model, task, f"s{i}", (i + len(model)) % 3 != 0)
        for model in ("reference", "acme/coder")
        for task in ("toy", "other")
        for i in range(4)
    ]
    records.append(record("acme/coder", "toy", "s0", True, paper="without"))
    return build_report(records, load_registry(), source="results")


def test_a_built_report_is_versioned_and_names_its_benchmark(report):
    assert report.schema_version == SCHEMA_VERSION == 1
    assert report.rcb_version and report.task_shas == {"other": "sha-other", "toy": "sha-toy"}
    assert len(report.tasks_sha) == 16
    entry = report.models["acme/coder"]
    assert entry.no_paper is not None and entry.tasks["toy"].grading in ("cases", "in-process")
    assert [c.a for c in report.comparisons] and report.comparisons[0].b in report.models


def test_a_report_round_trips_through_json(report, tmp_path):
    path = tmp_path / "report.json"
    path.write_text(report.to_json(), encoding="utf-8")
    again = Report.load(path)
    assert again == report
    assert again.to_json() == report.to_json()
    assert load_report(path) == report
    # Folder or file: the same model.
    assert load_report(tmp_path) == report


def _refusal(data: object, tmp_path: Path) -> str:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RcbError) as caught:
        Report.load(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message.removeprefix(f"{path}: ")


def test_an_unversioned_report_is_refused_with_what_to_do(report, tmp_path):
    data = report.model_dump(mode="json")
    del data["schema_version"]
    message = _refusal(data, tmp_path)
    assert message.startswith("schema_version missing") and "rerun rcb report" in message


def test_another_schema_version_is_refused(report, tmp_path):
    data = {**report.model_dump(mode="json"), "schema_version": 2}
    assert _refusal(data, tmp_path).startswith("schema_version 2 is not 1")


def test_a_wrong_type_or_an_unknown_field_is_refused_naming_it(report, tmp_path):
    data = report.model_dump(mode="json")
    bad = copy.deepcopy(data)
    bad["models"]["reference"]["snippets"] = "many"
    assert _refusal(bad, tmp_path).startswith("field 'models.reference.snippets': ")
    extra = copy.deepcopy(data)
    extra["models"]["reference"]["tasks"]["toy"]["secret"] = 1
    assert _refusal(extra, tmp_path) == "unknown field 'models.reference.tasks.toy.secret'"
    missing = copy.deepcopy(data)
    del missing["tasks_sha"]
    assert _refusal(missing, tmp_path) == "missing field 'tasks_sha'"
    assert _refusal([1, 2], tmp_path).startswith("field '(top level)': ")


def test_a_file_that_is_not_json_is_refused(tmp_path):
    (tmp_path / "report.json").write_text("{", encoding="utf-8")
    with pytest.raises(RcbError, match=r"report\.json: not a JSON report"):
        Report.load(tmp_path / "report.json")
    with pytest.raises(RcbError, match=r"nope\.json: report not found"):
        Report.load(tmp_path / "nope.json")


def test_every_consumer_reads_the_model(report):
    markdown = render_markdown(report)
    assert "acme/coder" in markdown and "### Per task" in markdown
    out = io.StringIO()
    print_report(report, Console(file=out, width=300))
    assert "acme/coder" in out.getvalue()
    assert "acme/coder" in score_table(report)
    # The plain data of report.json goes through the model too.
    assert score_table(report.model_dump(mode="json")) == score_table(report)
    comparison = compare_reports(report, report)
    assert comparison.changed_tasks == [] and comparison.common_tasks == 2
    assert "acme/coder" in render_comment(report, marker="<!-- k -->", comparison=comparison)
    with pytest.raises(RcbError, match="schema_version missing"):
        score_table({"models": {}})


def test_the_published_schema_is_the_models(cli):
    published = (ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8")
    assert published == report_schema(), "rcb report --schema > docs/report.schema.json"
    code, stdout, _ = cli("report", "--schema")
    assert code == 0 and stdout == published
    schema = json.loads(published)
    assert schema["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    assert schema["additionalProperties"] is False


def test_the_test_helper_makes_valid_reports():
    Report.from_data(report_data({"models": {"m": {"scaled_pass_at_1": 1.0}}}))


def test_one_library_call_runs_an_evaluation_and_returns_its_report(tmp_path):
    from conftest import FIXTURE_TASKS

    from rcb_action.runner import EvalConfig, run_evaluation

    config = EvalConfig(
        models=["reference"],
        out=tmp_path / "out",
        tasks_dir=FIXTURE_TASKS,
        tasks="toy",
        progress=False,
    )
    run = run_evaluation(config)
    assert isinstance(run.report, Report) and set(run.report.models) == {"reference"}
    assert run.report.models["reference"].scaled_pass_at_1 == 100.0
    assert run.report.task_shas.keys() == {"toy"} and run.summary.done >= 1
    assert run.report.below(100.0) == [] and run.report.below(100.1) == ["reference 100.0"]


def test_the_actions_inputs_become_typed_options_not_an_argv():
    from rcb_action.github import ActionInputs, evaluate_config

    config = evaluate_config(
        ActionInputs(
            models="reference\nnull",
            tasks="a, b",
            samples="3",
            shard="2/4",
            max_cost="1.5",
            registry="x.yaml",
            results_dir="out",
        )
    )
    assert config.models == ["reference", "null"] and config.tasks == "a,b"
    assert (config.samples, config.shard, config.max_cost_usd) == (3, (2, 4), 1.5)
    assert config.registry_files == [Path("x.yaml")] and config.out == Path("out")
    assert not config.progress
    for bad, field in [
        (ActionInputs(samples="0"), "samples"),
        (ActionInputs(shard="2"), "shard"),
        (ActionInputs(paper="maybe"), "paper"),
        (ActionInputs(max_cost="-1"), "max-cost"),
        (ActionInputs(models=""), "models"),
    ]:
        with pytest.raises(RcbError, match=f"^input '{field}'"):
            evaluate_config(bad)
