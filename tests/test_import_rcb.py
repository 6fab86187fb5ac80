"""ResearchCodeBench checkouts import as rcb tasks that run unchanged."""

import shutil
from pathlib import Path

import yaml
from conftest import ROOT

from rcb_action.importers.researchcodebench import environment_file, needed_modules
from rcb_action.papers import paper_for
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
    # The paper is the paper's own text, as ResearchCodeBench ships it (never paper.md).
    source = CHECKOUT / "pset" / "fixture-tex" / "paper2code_paper.tex"
    assert (out / "fixture-tex" / "paper.tex").read_bytes() == source.read_bytes()
    assert tex.config.paper.source == "imported" and tex.config.paper.file == "paper.tex"
    assert "paper.tex" not in tex.sandbox_files and not (out / "fixture-tex" / "paper.md").exists()
    assert "\\section{Method}" in build_prompt(tex, tex.snippet_names()[0]).text
    assert scaler.config.paper.file == "paper.txt"  # given as Markdown
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
    # Imported tasks report the sha of the paper text too, with no network.
    for task_id in ("fixture-scaler", "fixture-tex"):
        sha = paper_for(load_task(out / task_id), fetch=False).sha
        assert {r.paper_sha for r in records if r.task == task_id} == {sha}


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


def test_environment_yml_conda_packages_under_pip_names_for_cpu(tmp_path):
    path = tmp_path / "environment.yml"
    path.write_text(
        "name: x\nchannels: [pytorch, nvidia]\ndependencies:\n"
        "  - python=3.11\n  - pip>=23.0\n  - pytorch=2.1.2\n  - pytorch-cuda=11.8\n"
        "  - cudatoolkit=11.8\n  - libgcc-ng=11.2.0=h1234567_1\n  - numpy=1.26\n"
        "  - torchvision=0.16.2=py311_cu118\n"
        "  - pip:\n    - timm==0.9.12\n    - pandas>=2.0.0\n    - nvidia-cublas-cu12==12.1.3.1\n"
        "    - git+https://github.com/example/widgets.git@abc#egg=widgets\n"
    )
    found = {r.name: r for r in environment_file(path)}
    assert sorted(found) == ["numpy", "pandas", "timm", "torch", "torchvision", "widgets"]
    assert found["torch"].line == "torch==2.1.2" and found["torch"].conda  # never used for CPU
    assert found["torchvision"].line == "torchvision==0.16.2"
    assert found["pandas"].line is None and found["pandas"].spec == ">=2.0.0"
    assert found["widgets"].url and found["timm"].line == "timm==0.9.12"


def test_needed_packages_are_pinned_or_the_paper_is_left_out(cli, tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, checkout)
    (checkout / "environment.yml").write_text(
        "dependencies:\n  - pytorch=2.1.2\n  - torchvision=0.16.2\n  - pip:\n    - pandas>=2.0.0\n"
        "    - git+https://github.com/example/widgets.git@abc#egg=widgets\n"
    )
    scaler = checkout / "pset" / "fixture-scaler"
    (scaler / "extra.py").write_text(
        "import json\nimport pandas\nimport torch\nimport torchvision\ntry:\n    import not_needed\n"
        "except ImportError:\n    not_needed = None\n"
    )
    test = scaler / "paper2code_test.py"
    test.write_text("import extra\n" + test.read_text())
    (scaler / "data.parquet").write_bytes(b"PAR1")  # read through pandas: pyarrow is needed
    tex = checkout / "pset" / "fixture-tex" / "paper2code_test.py"
    tex.write_text("import widgets\n" + tex.read_text())
    assert needed_modules(scaler) == {"pandas", "torch", "torchvision"}
    out = tmp_path / "imported"
    code, stdout, err = cli("import", "rcb", checkout, "--out", out)
    assert code == 1 and "imported 1 of 3" in stdout
    assert "skip  fixture-tex: cannot pin what its tests import: imports widgets" in err
    assert "a URL, not an index package" in err
    env = load_task(out / "fixture-scaler").config.env
    lines = (out / "_envs" / env / "requirements.txt").read_text().splitlines()
    assert "pandas==2.2.3" in lines  # rcb's pin, which meets >=2.0.0
    assert "torch==2.13.0" in lines and "torch==2.1.2" not in lines  # the CPU build
    assert "torchvision==0.28.0" in lines  # built against that torch, not conda's 0.16.2
    assert "pyarrow==20.0.0" in lines


def test_papers_that_need_the_same_packages_share_an_environment(cli, tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(CHECKOUT, checkout)
    for paper in ("fixture-scaler", "fixture-tex"):
        test = checkout / "pset" / paper / "paper2code_test.py"
        test.write_text("import einops\n" + test.read_text())
    out = tmp_path / "imported"
    assert cli("import", "rcb", checkout, "--out", out)[0] == 1  # fixture-missing
    envs = {load_task(out / p).config.env for p in ("fixture-scaler", "fixture-tex")}
    assert envs == {"researchcodebench-fixture-scaler"}
    assert "einops==0.8.1" in (out / "_envs" / envs.pop() / "requirements.txt").read_text()
