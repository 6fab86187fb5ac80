"""ResearchCodeBench checkouts import as rcb tasks that run unchanged."""

from pathlib import Path

import yaml
from conftest import ROOT

from rcb_action.prompts import build_prompt
from rcb_action.results import ResultStore
from rcb_action.tasks import load_task

CHECKOUT = Path(__file__).parent / "fixtures" / "researchcodebench"


def test_import_writes_loadable_tasks(cli, tmp_path):
    out = tmp_path / "imported"
    code, stdout, err = cli("import", "rcb", CHECKOUT, "--out", out)
    assert code == 1  # one listed paper has no folder
    assert "imported 2 of 3 paper(s)" in stdout
    assert "skip  fixture-missing:" in err

    scaler = load_task(out / "fixture-scaler")
    config = scaler.config
    assert config.arxiv == "0000.00001"
    assert str(config.published) == "2025-01-15"  # the v1 date
    assert str(config.code_first_commit) == "2025-01-20"
    assert config.code_url == "https://github.com/example/fixture-scaler"
    assert config.annotated == ["model.py"] and config.context == ["helpers.py"]
    assert scaler.snippet_names() == ["forward", "scale", "shift and clip"]
    assert all(s.tests == ["paper2code_test.py"] for s in config.snippets.values())
    assert "paper2code_test.py" in scaler.sandbox_files and "model_ref.py" in scaler.sandbox_files

    tex = load_task(out / "fixture-tex")
    assert tex.config.arxiv == "0000.00002" and tex.config.annotated == ["layers.py"]
    assert "\\section{Method}" in (out / "fixture-tex" / "paper.md").read_text()
    raw = yaml.safe_load((out / "fixture-tex" / "task.yaml").read_text())
    assert raw["tests_dir"] == "."


def test_reference_copies_never_reach_a_prompt(cli, tmp_path):
    out = tmp_path / "imported"
    cli("import", "rcb", CHECKOUT, "--out", out)
    task = load_task(out / "fixture-scaler")
    for name in task.snippet_names():
        text = build_prompt(task, name).text
        assert "model_ref" not in text and "ReferenceScaler" not in text
        assert "paper2code_test" not in text
        assert "def clip" in text  # the context file is shown


def test_imported_tasks_score_like_native_ones(cli, tmp_path):
    out = tmp_path / "imported"
    requirements = ROOT / "tasks" / "_envs" / "numpy" / "requirements.txt"
    cli("import", "rcb", CHECKOUT, "--out", out, "--requirements", requirements)
    results = tmp_path / "results"
    code, _, _ = cli("evaluate", "--tasks-dir", out, "--out", results, "--no-progress")
    assert code == 0
    records = ResultStore(results).records()
    assert len(records) == 2 * 5  # reference and null on 3 + 2 snippets
    for record in records:
        assert record.status == ("pass" if record.model == "reference" else "fail"), record.message
