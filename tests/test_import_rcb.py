"""ResearchCodeBench checkouts import as rcb tasks that run unchanged."""

import shutil
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
    assert tex.config.arxiv is None and tex.config.annotated == ["layers.py"]
    assert tex.config.paper_url == "https://openreview.net/forum?id=FixtureTex01"
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


def test_environments_come_from_the_checkout_and_the_paper_folders(cli, tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, checkout)
    (checkout / "requirements.txt").write_text(
        "numpy==2.2.3\n"
        "appnope @ file:///home/conda/feedstock_root/build_artifacts/appnope_1/work\n"
        "pytest==8.3.5\n"
    )
    (checkout / "pset" / "fixture-tex" / "paper2code_requirements.txt").write_text(
        "einops==0.8.1\n"
    )
    out = tmp_path / "imported"
    cli("import", "rcb", checkout, "--out", out)
    shared = (out / "_envs" / "researchcodebench" / "requirements.txt").read_text()
    assert shared == "numpy==2.2.3\npytest==8.3.5\n"  # pip cannot fetch a conda build folder
    assert load_task(out / "fixture-scaler").config.env == "researchcodebench"
    tex = load_task(out / "fixture-tex")
    assert tex.config.env == "researchcodebench-fixture-tex"
    own = (out / "_envs" / tex.config.env / "requirements.txt").read_text()
    assert own == shared + "einops==0.8.1\n"
