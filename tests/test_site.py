"""The static site: what it computes, what it writes, and that it writes the same bytes twice.

The browser half (the page's JavaScript against these numbers) is in test_site_browser.py;
the synthetic results both use are built here.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS

from rcb_action.errors import RcbError
from rcb_action.models import load_registry
from rcb_action.report import build_report
from rcb_action.results import Record, ResultStore
from rcb_action.site import (
    MIN_WINDOW_SNIPPETS,
    build_site,
    build_site_data,
    build_time,
    default_window,
    load_results,
    results_fingerprint,
    window_ranking,
)
from rcb_action.tasks import load_tasks

D = dt.date

# Synthetic papers: (task id, published, domain, snippet weights). "toy" is the fixture
# task in tests/fixtures/tasks (its weights are the real ones); the others exist only
# in the results, as tasks removed from tasks/ or from another checkout would.
PAPERS = [
    ("alpha", D(2024, 3, 1), "biology", [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8]),
    ("beta", D(2024, 9, 15), "finance", [2, 7, 1, 8, 2, 8, 1, 8, 2, 8]),
    ("gamma", D(2025, 2, 1), "ml", [1, 4, 1, 4, 2, 1, 3, 5, 6, 2, 3, 7, 3, 1, 2]),
    ("toy", D(2025, 6, 1), "ml", {"affine": 2, "scale": 1, "shift": 1, "norm": 4, "slow sum": 3}),
    ("delta", D(2025, 8, 20), "physics", [1, 1, 2, 3, 5, 8, 13, 21]),
]

# Models: (id, skill, samples, knowledge cutoff or None for no registry entry).
MODELS = [
    ("acme/large", 0.7, 3, D(2024, 6, 1)),
    ("acme/small", 0.45, 1, D(2024, 6, 1)),
    ("acme/small-twin", 0.45, 1, D(2024, 6, 1)),  # same answers as acme/small: a tie
    ("beta-labs/coder", 0.6, 3, D(2025, 1, 15)),
    ("zeta/old", 0.3, 2, D(2023, 12, 1)),
    ("open/unlisted", 0.5, 1, None),
]
CLASSES = ["assertion", "name", "type", "value", "timeout", "syntax"]


def paper_snippets() -> list[tuple[str, D, str, str, int]]:
    out = []
    for task, published, domain, weights in PAPERS:
        items = weights.items() if isinstance(weights, dict) else enumerate(weights)
        for name, weight in items:
            snippet = name if isinstance(name, str) else f"{task} step {name:02d}"
            out.append((task, published, domain, snippet, weight))
    return out


def synthetic_records() -> list[Record]:
    """A deterministic results set exercising what the site must handle: several samples,
    a tie, a harness error, a no-paper ablation, an unregistered model, and one record
    left from an older version of a task (a different weight)."""
    records = []
    start = dt.datetime(2025, 9, 1, 12, 0, tzinfo=dt.UTC)
    for m, (model, skill, samples, _) in enumerate(MODELS):
        rng = random.Random(model.replace("-twin", ""))
        for i, (task, published, domain, snippet, weight) in enumerate(paper_snippets()):
            for sample in range(samples):
                for paper in (True, False) if model == "acme/large" else (True,):
                    passed = rng.random() < skill * (1.0 if paper else 0.6)
                    status = "pass" if passed else "fail"
                    if model == "beta-labs/coder" and i == 7 and sample == 1:
                        status = "harness_error"
                    records.append(
                        Record(
                            task=task,
                            snippet=snippet,
                            model=model,
                            sample=sample,
                            paper=paper,
                            task_sha=f"sha-{task}",
                            prompt_sha=f"p-{task}-{snippet}-{paper}",
                            weight=weight + (2 if (model == "zeta/old" and i == 3) else 0),
                            published=published,
                            domain=domain,
                            status=status,
                            failure_class=None if passed else CLASSES[(i + sample) % len(CLASSES)],
                            cost_usd=0.0004 * weight if model.startswith("acme") else 0.0,
                            tokens_in=100 * weight,
                            tokens_out=10 * weight,
                            created_at=(start + dt.timedelta(minutes=m * 500 + i)).isoformat(),
                        )
                    )
    return records


NEWEST = max(r.created_at for r in synthetic_records())


def reproduction_record(model: str, task: str, failed: str | None = None, **fields):
    """A reproduction attempt that passed every stage before ``failed``."""
    from rcb_action.reproduce import STAGES, ReproductionRecord, StageRecord, dimensions_of

    stages, dead = {}, False
    for stage in STAGES:
        dead = dead or stage == failed
        status = "failed" if stage == failed else ("not_run" if dead else "passed")
        stages[stage] = StageRecord(stage=stage, status=status, success=status == "passed")
    scores = fields.pop("scores", {"plan": 0.8, "method_accuracy": 0.7, "experiment_design": 0.4})
    return ReproductionRecord(
        task=task, model=model, task_sha="abc", published=dt.date(2025, 3, 1), status="scored",
        failed_stage=failed, stages=stages, scores=scores, dimensions=dimensions_of(stages, scores, 0.6),
        created_at="2025-06-02T10:00:00+00:00", **fields,
    )  # fmt: skip


def write_registry(path: Path) -> Path:
    entries = {
        model: {
            "display_name": model.split("/")[1].replace("-", " ").title(),
            "provider": model.split("/")[0],
            "knowledge_cutoff": cutoff.isoformat(),
        }
        for model, _, _, cutoff in MODELS
        if cutoff is not None
    }
    import yaml

    path.write_text(yaml.safe_dump({"models": entries}, sort_keys=True), encoding="utf-8")
    return path


def write_results(folder: Path, records: list[Record]) -> Path:
    store = ResultStore(folder)
    for record in records:
        store.append(record)
    return folder


@pytest.fixture
def results(tmp_path: Path) -> Path:
    return write_results(tmp_path / "results", synthetic_records())


@pytest.fixture
def registry_file(tmp_path: Path) -> Path:
    return write_registry(tmp_path / "registry.yaml")


def toy_tasks(folder: Path) -> Path:
    """A tasks folder holding only the fixture task ``toy`` (and its environment)."""
    for part in ("toy", "_envs"):
        shutil.copytree(FIXTURE_TASKS / part, folder / part, dirs_exist_ok=True)
    return folder


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    return toy_tasks(tmp_path / "tasks")


def build(results_dirs: list[Path], out: Path, registry: Path) -> Path:
    tasks = toy_tasks(out.parent / f"{out.name}-tasks")
    build_site(results_dirs, out, tasks_dir=tasks, registry_files=[registry])
    return out


def site_files(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
    }


# ---- The window, in Python (the reference the browser is held to) ----------------


def _rec(task, snippet, model, published, weight, passed, sample=0, **extra):
    return Record(
        task=task,
        snippet=snippet,
        model=model,
        sample=sample,
        task_sha="t",
        prompt_sha="p",
        weight=weight,
        published=published,
        status="pass" if passed else "fail",
        **extra,
    )


def _hand_registry(tmp_path: Path):
    path = tmp_path / "reg.yaml"
    path.write_text(
        "models:\n"
        "  early: {display_name: Early, provider: a, knowledge_cutoff: 2024-01-01}\n"
        "  late: {display_name: Late, provider: b, knowledge_cutoff: 2024-06-01}\n"
        "  tied: {display_name: Tied, provider: a, knowledge_cutoff: 2023-01-01}\n",
        encoding="utf-8",
    )
    return load_registry([path])


def test_window_ranking_hand_worked(tmp_path):
    registry = _hand_registry(tmp_path)
    p1, p2 = D(2024, 3, 1), D(2024, 9, 1)
    records = [
        # early: paper 1 passes 3 of 4 lines; paper 2 passes 1 of 2 lines.
        _rec("one", "a", "early", p1, 3, True),
        _rec("one", "b", "early", p1, 1, False),
        _rec("two", "c", "early", p2, 2, False),
        _rec("two", "d", "early", p2, 0, True),  # a snippet with no code lines
        # late: two samples on paper 2 only: 100% and 0%.
        _rec("two", "c", "late", p2, 2, True, sample=0),
        _rec("two", "c", "late", p2, 2, False, sample=1),
        # unknown: no registry entry, so no cutoff; a harness error is not scored.
        _rec("one", "a", "unknown", p1, 3, True),
        _rec("one", "b", "unknown", p1, 1, True).model_copy(update={"status": "harness_error"}),
    ]

    result = window_ranking(records, registry, D(2024, 2, 1), D(2024, 12, 31))
    rows = {r.model: r for r in result.rows}
    assert result.snippets == 4 and result.papers == 2 and result.too_few
    assert rows["early"].scaled_pass_at_1 == pytest.approx(100 * (3 + 0) / (3 + 1 + 2 + 0))
    assert rows["early"].pass_rate == pytest.approx(50.0)
    assert not rows["early"].contaminated and rows["early"].rank == 1
    assert rows["late"].contaminated and rows["late"].rank is None  # cutoff after the start
    assert rows["late"].scaled_pass_at_1 == pytest.approx(50.0)  # mean of 100 and 0
    # No known cutoff: it may have read any paper, so it is marked and never ranked.
    assert rows["unknown"].cutoff is None and rows["unknown"].contaminated
    assert rows["unknown"].scaled_pass_at_1 == 100.0 and rows["unknown"].rank is None
    assert [r.model for r in result.rows] == ["early", "unknown", "late"]

    # Only paper 2, starting after late's cutoff: late is ranked, unknown has nothing.
    result = window_ranking(records, registry, D(2024, 7, 1), D(2024, 12, 31))
    rows = {r.model: r for r in result.rows}
    assert result.snippets == 2 and result.papers == 1
    assert rows["early"].scaled_pass_at_1 == 0.0 and rows["late"].scaled_pass_at_1 == 50.0
    assert [(r.model, r.rank) for r in result.rows] == [
        ("late", 1),
        ("early", 2),
        ("unknown", None),
    ]
    assert rows["unknown"].snippets == 0 and rows["unknown"].scaled_pass_at_1 is None

    # A cutoff on the window's first day counts as contaminated (the paper may be read).
    on_the_day = window_ranking(records, registry, D(2024, 6, 1), D(2024, 12, 31))
    assert {r.model for r in on_the_day.rows if r.contaminated} == {"late", "unknown"}


def test_window_ties_share_a_rank_and_order_by_model(tmp_path):
    registry = _hand_registry(tmp_path)
    p = D(2024, 9, 1)
    records = [
        _rec("t", "a", "tied", p, 1, True),
        _rec("t", "b", "tied", p, 1, False),
        _rec("t", "a", "early", p, 1, False),
        _rec("t", "b", "early", p, 1, True),
        _rec("t", "a", "late", p, 1, False),
        _rec("t", "b", "late", p, 1, False),
    ]
    result = window_ranking(records, registry, D(2024, 8, 1), D(2024, 10, 1))
    assert [(r.model, r.rank) for r in result.rows] == [("early", 1), ("tied", 1), ("late", 3)]


def test_window_scores_the_headline_attempts_only(tmp_path):
    registry = _hand_registry(tmp_path)
    p = D(2024, 9, 1)
    records = [
        _rec("t", "a", "early", p, 1, True),
        _rec("t", "a", "early", p, 1, False, paper=False),  # the ablation: not the headline
        _rec("t", "a", "late", p, 1, False, paper=False),  # only no-paper runs: those count
    ]
    result = window_ranking(records, registry, D(2024, 8, 1), D(2024, 10, 1))
    rows = {r.model: r for r in result.rows}
    assert rows["early"].scaled_pass_at_1 == 100.0 and rows["late"].scaled_pass_at_1 == 0.0


def test_default_window_starts_after_every_cutoff(registry_file):
    records = synthetic_records()
    registry = load_registry([registry_file])
    start, end = default_window(records, registry)
    assert (start, end) == (D(2025, 2, 1), D(2025, 8, 20))  # after beta-labs' 2025-01-15
    result = window_ranking(records, registry, start, end)
    # Every model with a known cutoff is clean; the unregistered one never is.
    assert (
        {r.model for r in result.rows if r.contaminated}
        == {r.model for r in result.rows if r.cutoff is None}
        != set()
    )
    assert result.snippets == 15 + 5 + 8 and result.too_few
    everything = window_ranking(records, registry, D(2024, 1, 1), end)
    assert everything.snippets == 50 >= MIN_WINDOW_SNIPPETS and not everything.too_few


# ---- What the pages show ------------------------------------------------------------


def test_site_scores_are_the_reports(registry_file, tasks_dir):
    records = synthetic_records()
    registry = load_registry([registry_file])
    data = build_site_data(records, load_tasks(tasks_dir), registry)
    report = build_report(records, registry)
    assert [m.id for m in data.models][:1] == ["acme/large"]
    for view in data.models:
        entry = report.models[view.id]
        assert view.scaled == entry.scaled_pass_at_1
        assert view.pass_rate == entry.pass_rate
        assert list(view.ci or []) == entry.ci95
        assert view.failure_classes == entry.failure_classes
        assert view.harness_errors == entry.harness_errors
        for row in view.tasks:
            assert row.scaled == pytest.approx(entry.tasks[row.task.id].scaled_pass_at_1, abs=0.005)
    small, twin = (
        next(m for m in data.models if m.id == n) for n in ("acme/small", "acme/small-twin")
    )
    assert small.rank == twin.rank  # identical answers share a rank
    assert [a.model.id for a in data.ablation] == ["acme/large"]
    paired = data.ablation[0].paired
    assert paired is not None and paired["difference"] > 0  # the paper helped in this data


def test_task_pages_use_the_tasks_folder_and_fall_back_to_records(registry_file, tasks_dir):
    data = build_site_data(
        synthetic_records(), load_tasks(tasks_dir), load_registry([registry_file])
    )
    tasks = {t.id: t for t in data.tasks}
    assert list(tasks) == ["delta", "toy", "gamma", "beta", "alpha"]  # newest paper first
    toy = tasks["toy"]
    assert toy.in_tasks_dir and toy.arxiv == "0000.00000" and toy.title.startswith("rcb test")
    assert [(s.name, s.weight) for s in toy.snippets] == [
        ("affine", 2),
        ("scale", 1),
        ("shift", 1),
        ("norm", 4),
        ("slow sum", 3),
    ]
    assert not tasks["alpha"].in_tasks_dir and tasks["alpha"].arxiv is None
    assert tasks["alpha"].domain == "biology" and len(tasks["alpha"].snippets) == 12
    large = next(r for r in toy.rows if r.model.id == "acme/large")
    assert all(c.scored == 3 for c in large.cells)  # 3 samples, with-paper runs only


def test_build_is_deterministic_and_says_what_it_was_built_from(tmp_path, registry_file):
    records = synthetic_records()
    first = build([write_results(tmp_path / "a", records)], tmp_path / "site1", registry_file)
    # The same results split over two folders, in another order, built elsewhere.
    half = len(records) // 2
    split = [
        write_results(tmp_path / "b2", records[half:][::-1]),
        write_results(tmp_path / "b1", records[:half]),
    ]
    second = build(split, tmp_path / "deeper" / "site2", registry_file)
    assert site_files(first) == site_files(second)

    index = (first / "index.html").read_text()
    fingerprint = results_fingerprint([tmp_path / "a"])
    assert fingerprint == results_fingerprint(split)
    assert f"sha256:{fingerprint[:16]}" in index
    newest = dt.datetime.fromisoformat(NEWEST).strftime("%Y-%m-%d %H:%M UTC")
    assert newest in index
    meta = json.loads((first / "build.json").read_text())
    assert meta["fingerprint"] == fingerprint and meta["records"] == len(records)

    changed = [records[0].model_copy(update={"status": "fail"}), *records[1:]]
    assert results_fingerprint([write_results(tmp_path / "c", changed)]) != fingerprint


def test_source_date_epoch_sets_the_build_time(tmp_path, registry_file, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    out = build([write_results(tmp_path / "r", synthetic_records())], tmp_path / "s", registry_file)
    assert "2023-11-14 22:13 UTC" in (out / "index.html").read_text()
    assert build_time([], environ={}) is None
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(RcbError, match="SOURCE_DATE_EPOCH"):
        build_time([])


class _Resources(HTMLParser):
    """Collects what a page would load, its CSP, and accessibility basics."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []
        self.csp: list[str] = []
        self.inline_styles = 0
        self.inline_scripts = 0
        self.tables = 0
        self.captions = 0
        self._in_script: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video", "embed") and a.get("src"):
            self.loads.append(a["src"])
        if tag == "link" and a.get("href"):
            self.loads.append(a["href"])
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy":
            self.csp.append(a.get("content") or "")
        self.inline_styles += "style" in a or tag == "style"
        if tag == "script" and not a.get("src"):
            self._in_script = a.get("type")
            self.inline_scripts += a.get("type") != "application/json"
        self.tables += tag == "table"
        self.captions += tag == "caption"


def test_every_page_forbids_and_makes_no_outside_requests(tmp_path, results, registry_file):
    out = build([results], tmp_path / "site", registry_file)
    pages = sorted(out.rglob("*.html"))
    names = {p.relative_to(out).as_posix() for p in pages}
    expected = {
        "index.html",
        "tasks.html",
        "ablation.html",
        "reproduction.html",
        "methodology.html",
    }
    assert expected <= names
    assert {n for n in names if n.startswith("tasks/")} == {f"tasks/{t}.html" for t, *_ in PAPERS}
    assert len([n for n in names if n.startswith("models/")]) == len(MODELS)
    for page in pages:
        parsed = _Resources()
        parsed.feed(page.read_text(encoding="utf-8"))
        where = page.relative_to(out)
        assert len(parsed.csp) == 1, where
        assert "default-src 'none'" in parsed.csp[0] and "connect-src 'none'" in parsed.csp[0]
        assert parsed.loads and all(not re.match(r"^[a-z]+:|^//", u) for u in parsed.loads), where
        assert all((page.parent / u).is_file() for u in parsed.loads), where
        assert parsed.inline_styles == 0 and parsed.inline_scripts == 0, where
        assert parsed.tables == parsed.captions, where
    assert (out / ".nojekyll").is_file()


def test_pages_say_what_they_must(tmp_path, results, registry_file):
    out = build([results], tmp_path / "site", registry_file)
    index = (out / "index.html").read_text()
    for heading in ("Overall", "Contamination window", "Failure classes", "Score by domain"):
        assert f">{heading}</h2>" in index
    assert index.count('<tr data-model="') == 2 * len(MODELS)  # overall and window tables
    toy = (out / "tasks" / "toy.html").read_text()
    assert "https://arxiv.org/abs/0000.00000" in toy and "slow sum" in toy
    method = (out / "methodology.html").read_text()
    for words in ("ResearchCodeBench", "PaperBench", "scaled pass@1", "knowledge cutoff"):
        assert words in method
    assert "acme/large" in (out / "ablation.html").read_text()
    assert "No reproduction results yet" in (out / "reproduction.html").read_text()


def test_reproduction_results_are_shown_as_the_report_computes_them(
    tmp_path, results, registry_file
):
    from rcb_action.reproduce import ReproductionStore, reproduction_section

    store = ReproductionStore(results)
    attempts = [
        reproduction_record("acme/large", "t1"),
        reproduction_record("acme/large", "t2", failed="env_setup"),
        reproduction_record("acme/large", "t3", needs_review=True, review_reasons=["train and test splits overlap"]),
    ]  # fmt: skip
    for attempt in attempts:
        store.append(attempt)
    out = build([results], tmp_path / "site", registry_file)
    page = (out / "reproduction.html").read_text()
    assert "No reproduction results yet" not in page
    assert "3 attempts · 1 model · 3 papers" in page
    section = reproduction_section(attempts)["models"]["acme/large"]
    env_rate = section["failure_rates"]["env_setup"]
    assert f">{env_rate:.1f}<" in page  # one of three attempts failed environment setup
    assert ">train and test splits overlap<" in page
    assert (
        f">{section['plan_score']:.1f}<" in page and f">{section['execution_success']:.1f}<" in page
    )
    inputs = load_results([results])
    assert len(inputs.reproduction) == 3

    only = tmp_path / "repro-only"
    ReproductionStore(only).append(attempts[0])
    page = (build([only], tmp_path / "s2", registry_file) / "reproduction.html").read_text()
    assert "1 attempt · 1 model · 1 paper" in page


def test_a_task_whose_gold_run_failed_is_listed_not_scored(tmp_path, results, registry_file):
    from rcb_action.reproduce import GOLD_FILE, ReproductionStore

    ReproductionStore(results).append(reproduction_record("acme/large", "t1"))
    ReproductionStore(results).append(
        reproduction_record("acme/large", "broken", failed="code_impl")
    )
    gold = ReproductionStore(results, name=GOLD_FILE)
    gold.append(reproduction_record("reference", "broken", failed="train_debug"))
    gold.append(reproduction_record("reference", "t1"))
    page = (build([results], tmp_path / "site", registry_file) / "reproduction.html").read_text()
    assert "Not scored: 1 task whose gold run failed (broken" in page
    assert "1 attempt · 1 model · 1 paper" in page


def test_an_empty_results_file_builds_empty_states(tmp_path, registry_file):
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "results.jsonl").write_text("")
    out = build([folder], tmp_path / "site", registry_file)
    assert "No results yet." in (out / "index.html").read_text()
    assert "unknown time" in (out / "index.html").read_text()


# ---- The command -------------------------------------------------------------------


def test_cli_builds_and_rebuilds(tmp_path, results, registry_file, tasks_dir, cli):
    out = tmp_path / "site"
    args = ("site", "build", results, "--out", out, "--tasks-dir", tasks_dir)
    code, _, err = cli(*args, "--registry", registry_file)
    assert code == 0, err
    assert "site built" in err and (out / "index.html").is_file()
    stale = out / "models" / "gone.html"
    stale.write_text("from an older build")
    assert cli(*args, "--registry", registry_file)[0] == 0
    assert not stale.exists()  # the old build was replaced, not added to


def test_cli_errors_are_one_line(tmp_path, results, tasks_dir, cli, monkeypatch):
    code, _, err = cli("site", "build", tmp_path / "nowhere", "--out", tmp_path / "o")
    assert code == 2 and err.count("\n") == 1 and "results.jsonl" in err

    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    code, _, err = cli("site", "build", results, "--out", precious, "--tasks-dir", tasks_dir)
    assert code == 2 and "not empty" in err and err.count("\n") == 1
    assert (precious / "notes.txt").read_text() == "keep me"

    monkeypatch.setenv("RCB_SITE_DIR", str(tmp_path / "no-site"))
    code, _, err = cli("site", "build", results, "--out", tmp_path / "o", "--tasks-dir", tasks_dir)
    assert code == 2 and "RCB_SITE_DIR" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()

    code, _, err = cli("site")
    assert code == 2 and "build" in err


def test_browser_tests_skip_here_but_fail_under_ci(monkeypatch):
    from test_site_browser import _unavailable

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no chromium"):
        _unavailable("no chromium")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but no chromium"):
        _unavailable("no chromium")


def test_only_web_addresses_become_links(tmp_path, results, registry_file, tasks_dir):
    config = tasks_dir / "toy" / "task.yaml"
    config.write_text(config.read_text() + 'code_url: "javascript:alert(1)"\n')
    out = tmp_path / "site"
    build_site([results], out, tasks_dir=tasks_dir, registry_files=[registry_file])
    page = (out / "tasks" / "toy.html").read_text()
    assert "javascript:alert(1)" in page and 'href="javascript:' not in page
