"""The built site in a real browser: headless Chromium from the system's packages.

Every page loads from file:// with no console error and no request outside the site;
moving the contamination window re-ranks to exactly what rcb_action.site.window_ranking
computes; tables sort; the layout holds on a phone; a screenshot is kept as an artifact.
Skipped (with the reason) where Chromium or Playwright is missing, except under CI=true.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from test_site import (
    reproduction_record,
    synthetic_records,
    toy_tasks,
    write_registry,
    write_results,
)

from rcb_action.models import load_registry
from rcb_action.reproduce import ReproductionStore
from rcb_action.site import MIN_WINDOW_SNIPPETS, build_site, window_ranking

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = ROOT / "artifacts" / "site"
D = dt.date


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    print(f"skipping browser tests: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is missing (pip install -e '.[test]')")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("site")
    records = synthetic_records()
    registry_file = write_registry(base / "registry.yaml")
    out = base / "site"
    results = write_results(base / "results", records)
    store = ReproductionStore(results)
    store.append(reproduction_record("acme/large", "t1"))
    store.append(reproduction_record("acme/large", "t2", failed="env_setup"))
    build_site(
        [results],
        out,
        tasks_dir=toy_tasks(base / "tasks"),
        registry_files=[registry_file],
    )
    return {"out": out, "records": records, "registry": load_registry([registry_file])}


class Page:
    """A page with everything it logged and requested recorded."""

    def __init__(self, browser: Any, **options: Any) -> None:
        self.context = browser.new_context(**options)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on(
            "console",
            lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None,
        )
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))

    def open(self, path: Path) -> Any:
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")
        return self.page

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser: Any) -> Iterator[Page]:
    page = Page(browser, viewport={"width": 1280, "height": 900})
    yield page
    page.close()


def test_every_page_loads_clean(site, tab):
    out: Path = site["out"]
    pages = sorted(out.rglob("*.html"))
    assert len(pages) >= 5 + 5 + 6
    for path in pages:
        page = tab.open(path)
        assert page.title().endswith("rcb leaderboard"), path
        assert page.locator("h1").count() == 1, path
    assert tab.errors == []
    outside = [u for u in tab.requests if not u.startswith("file://")]
    assert outside == []
    # The script ran: the window controls it reveals are visible.
    page = tab.open(out / "index.html")
    assert page.locator("#window-controls").is_visible()
    assert tab.errors == []


def _window_rows(page: Any) -> list[tuple[str, int | None, float | None]]:
    rows = page.eval_on_selector_all(
        "#window-table tbody tr",
        "rows => rows.map(r => [r.dataset.model, r.dataset.rank, r.dataset.score,"
        " r.classList.contains('contaminated')])",
    )
    return [
        (m, int(rank) if rank else None, float(score) if score else None, marked)
        for m, rank, score, marked in rows
    ]


def _expected(site: dict[str, Any], start: D, end: D) -> Any:
    return window_ranking(site["records"], site["registry"], start, end)


def _assert_same(page: Any, expected: Any) -> None:
    got = _window_rows(page)
    assert [g[0] for g in got] == [r.model for r in expected.rows]
    for (model, rank, score, marked), row in zip(got, expected.rows, strict=True):
        assert rank == row.rank, model
        assert marked == row.contaminated, model
        if row.scaled_pass_at_1 is None:
            assert score is None, model
        else:
            assert score == pytest.approx(row.scaled_pass_at_1, abs=1e-9), model
    status = page.locator("#window-status").inner_text()
    if expected.start <= expected.end:
        papers = f"{expected.papers} paper{'s' if expected.papers != 1 else ''}"
        assert status.startswith(f"{expected.snippets} snippets from {papers} published")
    assert page.locator("#window-warning").is_visible() == expected.too_few
    assert expected.too_few == (expected.snippets < MIN_WINDOW_SNIPPETS)


def test_the_window_ranks_as_python_does(site, tab):
    page = tab.open(site["out"] / "index.html")
    start, end = page.input_value("#win-start"), page.input_value("#win-end")
    _assert_same(page, _expected(site, D.fromisoformat(start), D.fromisoformat(end)))

    windows = [
        (D(2024, 1, 1), D(2025, 12, 31)),  # everything: most models marked
        (D(2024, 6, 1), D(2025, 12, 31)),  # starts on acme's cutoff day: acme marked
        (D(2024, 6, 2), D(2025, 12, 31)),  # just after acme's cutoff: acme ranked, 36 snippets
        (D(2024, 9, 15), D(2024, 9, 15)),  # one paper, on its publication day
        (D(2023, 1, 1), D(2024, 6, 1)),  # only alpha: every model with a cutoff marked
        (D(2025, 9, 1), D(2025, 12, 31)),  # after every paper: nothing to rank
        (D(2025, 6, 1), D(2024, 1, 1)),  # start after end: empty
    ]
    seen_orders = set()
    for start, end in windows:
        page.fill("#win-start", start.isoformat())
        page.fill("#win-end", end.isoformat())
        expected = _expected(site, start, end)
        _assert_same(page, expected)
        seen_orders.add(tuple(r.model for r in expected.rows))
    assert len(seen_orders) >= 4  # the windows really did re-rank
    assert tab.errors == []


def test_the_window_moves_by_keyboard_and_presets(site, tab):
    page = tab.open(site["out"] / "index.html")
    page.click("#win-all")
    assert page.input_value("#win-start") == "2024-03-01"
    _assert_same(page, _expected(site, D(2024, 3, 1), D(2025, 8, 20)))

    page.focus("#win-start-slider")
    page.keyboard.press("ArrowRight")  # to the next paper's date
    assert page.input_value("#win-start") == "2024-09-15"
    _assert_same(page, _expected(site, D(2024, 9, 15), D(2025, 8, 20)))
    page.focus("#win-end-slider")
    page.keyboard.press("ArrowLeft")
    assert page.input_value("#win-end") == "2025-06-01"
    _assert_same(page, _expected(site, D(2024, 9, 15), D(2025, 6, 1)))

    page.click("#win-clean")
    assert (page.input_value("#win-start"), page.input_value("#win-end")) == (
        "2025-02-01",
        "2025-08-20",
    )
    assert tab.errors == []


def _column(page: Any, table: str, index: int) -> list[str]:
    return page.eval_on_selector_all(
        f"{table} tbody tr",
        f"rows => rows.map(r => r.cells[{index}].dataset.sort ?? r.cells[{index}].textContent)",
    )


def test_tables_sort(site, tab):
    page = tab.open(site["out"] / "index.html")
    header = page.locator("#leaderboard thead th").nth(4)  # pass rate
    header.locator("button").click()
    values = [float(v) for v in _column(page, "#leaderboard", 4)]
    assert values == sorted(values, reverse=True)
    assert header.get_attribute("aria-sort") == "descending"
    header.locator("button").click()
    values = [float(v) for v in _column(page, "#leaderboard", 4)]
    assert values == sorted(values)
    assert header.get_attribute("aria-sort") == "ascending"
    assert page.locator("#leaderboard thead th").nth(0).get_attribute("aria-sort") is None

    # By keyboard: the rank column back to its first order.
    page.locator("#leaderboard thead th").nth(0).locator("button").focus()
    page.keyboard.press("Enter")
    ranks = [int(v) for v in _column(page, "#leaderboard", 0)]
    assert ranks == sorted(ranks)

    # Text columns, and dates with an empty cell kept last.
    page.locator("#leaderboard thead th").nth(5).locator("button").click()
    cutoffs = _column(page, "#leaderboard", 5)
    known = [c for c in cutoffs if c != "—"]
    assert cutoffs == sorted(known, reverse=True) + ["—"] * (len(cutoffs) - len(known))
    assert len(known) < len(cutoffs)  # the unregistered model, last
    assert tab.errors == []


def test_keyboard_reaches_every_control(site, tab):
    page = tab.open(site["out"] / "index.html")
    wanted = {"win-start", "win-end", "win-start-slider", "win-end-slider", "win-clean", "win-all"}
    reached: set[str] = set()
    sort_buttons = 0
    for _ in range(80):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => { const e = document.activeElement;"
            " return [e.id, e.tagName, !!e.closest('thead')]; }"
        )
        reached.add(focused[0])
        sort_buttons += focused[1] == "BUTTON" and focused[2]
    assert wanted <= reached
    assert sort_buttons >= 7


def test_accessibility_basics(site, tab):
    for path in sorted(site["out"].rglob("*.html")):
        page = tab.open(path)
        problems = page.evaluate(
            """() => {
              const out = [];
              for (const t of document.querySelectorAll('table')) {
                if (!t.caption || !t.caption.textContent.trim()) out.push('table without caption');
                for (const th of t.querySelectorAll('thead th'))
                  if (th.getAttribute('scope') !== 'col') out.push('header without scope');
              }
              for (const i of document.querySelectorAll('input, select, textarea'))
                if (!i.labels.length && !i.getAttribute('aria-label')) out.push('unlabelled ' + i.id);
              for (const s of document.querySelectorAll('svg'))
                if (s.getAttribute('aria-hidden') !== 'true' &&
                    !(s.getAttribute('role') === 'img' && s.getAttribute('aria-label')))
                  out.push('svg without a label');
              for (const r of document.querySelectorAll('.table-wrap'))
                if (r.getAttribute('tabindex') !== '0' || !r.getAttribute('aria-labelledby'))
                  out.push('scroll region not focusable or unnamed');
              if (!document.documentElement.lang) out.push('no lang');
              return out;
            }"""
        )
        assert problems == [], path


def test_readable_on_a_phone(site, browser):
    phone = Page(browser, viewport={"width": 390, "height": 844}, device_scale_factor=2)
    try:
        for path in sorted(site["out"].rglob("*.html")):
            page = phone.open(path)
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"{path.name} is {width}px wide on a 390px screen"
            size = page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)")
            assert size >= 14
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        phone.open(site["out"] / "index.html").screenshot(
            path=str(ARTIFACTS / "leaderboard-phone.png"), full_page=True
        )
        assert phone.errors == []
    finally:
        phone.close()


def test_leaderboard_screenshot(site, tab):
    page = tab.open(site["out"] / "index.html")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    target = ARTIFACTS / "leaderboard.png"
    page.screenshot(path=str(target), full_page=True)
    print(f"leaderboard screenshot: {target}")
    assert target.stat().st_size > 10_000
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
