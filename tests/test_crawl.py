"""``rcb crawl`` end to end, offline: recorded arXiv feeds served on 127.0.0.1."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import arxiv
import pytest
import yaml
from conftest import FIXTURE_TASKS
from fake_arxiv import FIXTURES, FakeArxiv, recorded
from fake_github import FakeGitHub

from crawler import ISSUE_LABEL, load_queue, render_queue
from rcb_action.models import load_registry

# What the recorded "crawl" feed holds, by what the crawler must do with each entry.
WITH_CODE = {"2507.99901", "2507.99902", "2507.99904", "2507.99906", "2507.99908", "2507.99910"}
ALREADY_A_TASK = "2507.99909"
DROPPED = {"2507.99903", "2507.99905", "2507.99907", "2506.99911", "2507.99912", ALREADY_A_TASK}
PAGE_SIZE = 4


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """A tasks folder (one task has a paper in the feed), a queue and cursor, a private cache."""
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASKS / "_envs", tasks / "_envs")
    (tasks / "already").mkdir()
    (tasks / "already" / "task.yaml").write_text(f'id: already\narxiv: "{ALREADY_A_TASK}"\n')
    monkeypatch.setenv("RCB_CACHE_DIR", str(tmp_path / "cache"))
    return SimpleNamespace(
        root=tmp_path,
        tasks=tasks,
        queue=tmp_path / "crawler" / "queue.yaml",
        cursor=tmp_path / "cursor.json",
    )


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeArxiv]]:
    """Start a fake arXiv API on recorded pages and point the ``arxiv`` package at it."""
    started: list[FakeArxiv] = []

    def start(pages: list[Path]) -> FakeArxiv:
        fake = FakeArxiv(pages).__enter__()
        started.append(fake)
        monkeypatch.setattr(arxiv.Client, "query_url_format", fake.query_url_format)
        return fake

    yield start
    for fake in started:
        fake.__exit__()


def crawl_args(world: SimpleNamespace, *extra: object) -> list[object]:
    return [
        "crawl",
        "--queue", world.queue,
        "--cursor", world.cursor,
        "--tasks-dir", world.tasks,
        "--page-size", PAGE_SIZE,
        "--delay", "0.01",
        *extra,
    ]  # fmt: skip


def since(world: SimpleNamespace, *extra: object) -> list[object]:
    return crawl_args(world, "--since", "2025-07-01", *extra)


def points_in(reasons: list[str]) -> int:
    return sum(int(n) for n in re.findall(r"\(\+(\d+)\)$", "\n".join(reasons), re.M))


def test_crawl_queues_papers_with_code_from_every_page(cli, world, serve):
    fake = serve(recorded("crawl"))
    code, out, err = cli(*since(world))
    assert code == 0, err

    queue = load_queue(world.queue)
    assert set(queue.candidates) == WITH_CODE
    assert not DROPPED & set(queue.candidates)
    # Every page was asked for, politely sorted oldest first, all answered.
    assert fake.requests[0].start == 0
    assert max(r.start for r in fake.requests) >= 2 * PAGE_SIZE
    assert all(r.status == 200 for r in fake.requests)
    assert {(r.sort_by, r.sort_order) for r in fake.requests} == {("submittedDate", "ascending")}
    query = fake.requests[0].search_query
    assert "cat:q-bio.*" in query and "cat:cs.LG" in query
    assert "submittedDate:[202507010000 TO " in query

    # The malformed entries were skipped with a warning naming them, not a crash.
    assert "warning" in err and "2507.99905" in err and "2507.99907" in err
    for arxiv_id in WITH_CODE:
        assert f"new      {arxiv_id}" in out

    # Reasons explain the score, and the file is sorted by score then id.
    listed = list(queue.sorted())
    assert [c.arxiv for c in listed] == sorted(
        queue.candidates, key=lambda i: (-queue.candidates[i].score, i)
    )
    for candidate in listed:
        assert candidate.code_links
        assert candidate.score == points_in(candidate.reasons)
        assert any(r.startswith("code: ") for r in candidate.reasons)
        assert (candidate.domain != "ml") == any(
            r.startswith("domain: ") for r in candidate.reasons
        )
    domains = {c.arxiv: c.domain for c in listed}
    assert domains["2507.99901"] == "ml"
    assert domains["2507.99902"] == "biology"
    assert domains["2507.99904"] == "materials"
    assert domains["2507.99906"] == "finance"
    assert domains["2507.99908"] == "physics"
    kinds = {c.arxiv: c.code_links[0].kind for c in listed}
    assert kinds == {
        "2507.99901": "repository",
        "2507.99902": "repository",
        "2507.99904": "huggingface",
        "2507.99906": "project page",
        "2507.99908": "archive",
        "2507.99910": "repository",
    }
    # The file on disk is exactly the rendering of what it holds (sorted, stable).
    assert world.queue.read_text() == render_queue(queue.candidates.values())
    assert "crawl complete" in err
    assert not world.cursor.exists()


def test_rerun_with_nothing_new_changes_nothing(cli, world, serve):
    serve(recorded("crawl"))
    assert cli(*since(world))[0] == 0
    before = world.queue.read_bytes()
    stamp = world.queue.stat().st_mtime_ns

    code, out, err = cli(*since(world))
    assert code == 0, err
    assert world.queue.read_bytes() == before
    assert world.queue.stat().st_mtime_ns == stamp
    assert "new " not in out and "updated" not in out
    assert "unchanged" in err


def test_later_version_updates_the_entry_and_keeps_triage(cli, world, serve):
    serve(recorded("crawl"))
    assert cli(*since(world))[0] == 0
    first = load_queue(world.queue).candidates["2507.99901"]
    # A maintainer triages the paper in the file.
    data = yaml.safe_load(world.queue.read_text())
    for entry in data["candidates"]:
        if entry["arxiv"] == "2507.99901":
            entry["status"], entry["note"] = "rejected", "too close to an existing task"
    world.queue.write_text(yaml.safe_dump(data, sort_keys=False))

    serve(recorded("updated"))
    code, out, err = cli(*since(world))
    assert code == 0, err
    queue = load_queue(world.queue)
    entry = queue.candidates["2507.99901"]
    assert entry.version == 2 and first.version == 1
    assert entry.title == "Fixture: Gated Sparse Attention, Revisited" != first.title
    assert entry.published == first.published  # v1's date stays the contamination clock
    assert entry.updated > first.updated
    assert (entry.status, entry.note) == ("rejected", "too close to an existing task")
    assert "updated  2507.99901" in out
    assert "new      2508.99913" in out
    assert set(queue.candidates) == WITH_CODE | {"2508.99913"}  # one entry per paper


def test_an_older_version_never_overwrites_a_newer_one(cli, world, serve):
    serve(recorded("updated"))
    assert cli(*since(world))[0] == 0
    serve(recorded("crawl"))
    assert cli(*since(world))[0] == 0
    entry = load_queue(world.queue).candidates["2507.99901"]
    assert (entry.version, entry.title) == (2, "Fixture: Gated Sparse Attention, Revisited")


def test_server_error_is_retried_then_succeeds(cli, world, serve):
    fake = serve(recorded("crawl"))
    fake.fail(0, status=503)
    code, _, err = cli(*since(world))
    assert code == 0, err
    assert [r.status for r in fake.requests[:2]] == [503, 200]
    assert fake.requests[0].start == fake.requests[1].start == 0
    assert set(load_queue(world.queue).candidates) == WITH_CODE


def test_unexpectedly_empty_page_is_retried(cli, world, serve):
    fake = serve(recorded("crawl"))
    fake.answer(PAGE_SIZE, (FIXTURES / "empty.xml").read_bytes())
    code, _, err = cli(*since(world))
    assert code == 0, err
    assert [r.start for r in fake.requests].count(PAGE_SIZE) == 2
    assert set(load_queue(world.queue).candidates) == WITH_CODE


def test_query_with_no_results(cli, world, serve):
    fake = serve([FIXTURES / "empty.xml"])
    code, _, err = cli(*since(world))
    assert code == 0, err
    assert len(fake.requests) == 1
    assert load_queue(world.queue).candidates == {}
    assert "read 0 arXiv entries" in err and "crawl complete" in err
    # An existing queue is left as it is.
    serve(recorded("crawl"))
    assert cli(*since(world))[0] == 0
    before = world.queue.read_bytes()
    serve([FIXTURES / "empty.xml"])
    assert cli(*since(world))[0] == 0
    assert world.queue.read_bytes() == before


def test_interrupted_crawl_resumes_from_the_cursor(cli, world, serve, tmp_path):
    # The reference: the same crawl, never interrupted, into another queue.
    serve(recorded("crawl"))
    whole = SimpleNamespace(**{**vars(world), "queue": tmp_path / "whole.yaml"})
    whole.cursor = tmp_path / "whole-cursor.json"
    assert cli(*since(whole))[0] == 0

    fake = serve(recorded("crawl"))
    fake.fail(PAGE_SIZE, status=503, times=10)  # the second page keeps failing
    code, _, err = cli(*since(world))
    assert code == 2
    message = err.strip().splitlines()[-1]
    assert message.startswith("rcb: error: arXiv API:") and "HTTP 503" in message
    assert "run the same command again" in message
    saved = load_queue(world.queue).candidates
    assert saved and set(saved) < WITH_CODE  # the first page is kept
    assert world.cursor.is_file()

    fake = serve(recorded("crawl"))
    code, _, err = cli(*since(world))
    assert code == 0, err
    assert fake.requests[0].start == PAGE_SIZE  # continued, did not start over
    assert "resumed at entry 4" in err
    assert world.queue.read_text() == whole.queue.read_text()
    assert not world.cursor.exists()


def test_interrupt_saves_the_queue_and_cursor(cli, world, serve, monkeypatch):
    serve(recorded("crawl"))
    from crawler import _candidates

    real_add = _candidates.Collector.add
    seen: list[str] = []

    def interrupted(self, result):
        seen.append(result.entry_id)
        if len(seen) == PAGE_SIZE + 1:
            raise KeyboardInterrupt
        return real_add(self, result)

    monkeypatch.setattr(_candidates.Collector, "add", interrupted)
    assert cli(*since(world))[0] == 130
    assert world.cursor.is_file()
    assert load_queue(world.queue).candidates  # the first page was merged
    monkeypatch.setattr(_candidates.Collector, "add", real_add)

    fake = serve(recorded("crawl"))
    assert cli(*since(world))[0] == 0
    assert fake.requests[0].start == PAGE_SIZE
    assert set(load_queue(world.queue).candidates) == WITH_CODE


def test_max_stops_early_and_the_next_run_continues(cli, world, serve):
    fake = serve(recorded("crawl"))
    code, _, err = cli(*since(world, "--max", PAGE_SIZE))
    assert code == 0, err
    assert len(fake.requests) == 1
    assert "run the same command again to continue" in err
    first = set(load_queue(world.queue).candidates)
    assert first and first < WITH_CODE

    fake = serve(recorded("crawl"))
    code, _, err = cli(*since(world))
    assert code == 0, err
    assert fake.requests[0].start == PAGE_SIZE
    assert set(load_queue(world.queue).candidates) == WITH_CODE
    assert "crawl complete" in err

    # --restart ignores a saved cursor.
    fake = serve(recorded("crawl"))
    assert cli(*since(world, "--max", PAGE_SIZE))[0] == 0
    fake = serve(recorded("crawl"))
    assert cli(*since(world, "--restart"))[0] == 0
    assert fake.requests[0].start == 0


def test_a_page_the_parser_cannot_read_is_skipped_with_a_warning(cli, world, serve):
    serve(recorded("bad-date"))
    code, _, err = cli(*since(world, "--page-size", "2"))
    assert code == 0, err
    assert "could not be parsed" in err
    assert set(load_queue(world.queue).candidates) == {"2508.99923", "2508.99924"}


def test_queue_entries_that_become_tasks_are_marked(cli, world, serve):
    shutil.rmtree(world.tasks / "already")
    serve(recorded("crawl"))
    assert cli(*since(world))[0] == 0
    assert load_queue(world.queue).candidates[ALREADY_A_TASK].status == "new"

    (world.tasks / "already").mkdir()
    (world.tasks / "already" / "task.yaml").write_text(f'id: already\narxiv: "{ALREADY_A_TASK}"\n')
    serve(recorded("crawl"))
    assert cli(*since(world))[0] == 0
    entry = load_queue(world.queue).candidates[ALREADY_A_TASK]
    assert (entry.status, entry.task) == ("task", "already")


def test_after_cutoff_is_the_default(cli, world, serve):
    fake = serve(recorded("crawl"))
    code, _, err = cli(*crawl_args(world))
    assert code == 0, err
    latest = load_registry().latest_cutoff()
    assert latest is not None
    start = latest + dt.timedelta(days=1)
    assert f"submittedDate:[{start:%Y%m%d}0000 TO " in fake.requests[0].search_query
    assert f"since {start}" in err


def test_progress_is_reported(cli, world, serve):
    serve(recorded("crawl"))
    _, _, err = cli(*since(world))
    assert re.search(r"rcb: crawl: 4 of 12 entries read, \d+ with code", err)
    serve(recorded("crawl"))
    _, _, quiet = cli(*since(world, "--quiet"))
    assert "entries read," not in quiet


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--since", "2025-13-01"], "--since"),
        (["--since", "2999-01-01"], "--since"),
        (["--since", "2025-07-01", "--categories", "CS.LG"], "--categories"),
        (["--since", "2025-07-01", "--categories", "cs.LG", "q bio"], "--categories"),
        (["--since", "2025-07-01", "--page-size", "5000"], "--page-size"),
        (["--since", "2025-07-01", "--issues", "not a repo"], "--issues"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(cli, world, serve, extra, flag):
    fake = serve(recorded("crawl"))
    code, _, err = cli(*crawl_args(world, *extra))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"rcb: error: {flag}")
    assert fake.requests == []


def test_delay_below_three_seconds_is_refused_against_arxiv(cli, world):
    code, _, err = cli(*since(world))  # no fake: the real arXiv address
    assert code == 2
    assert err.strip().startswith("rcb: error: --delay: arXiv asks for at least 3 s")


def test_a_broken_queue_file_is_named(cli, world, serve):
    serve(recorded("crawl"))
    world.queue.parent.mkdir(parents=True)
    world.queue.write_text("candidates:\n- arxiv: '2507.99901'\n  version: one\n")
    code, _, err = cli(*since(world))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"rcb: error: {world.queue}: key 'candidates.0.version': ")
    assert lines[0].endswith("(got 'one')")


def test_issues_one_per_candidate_never_twice(cli, world, serve, monkeypatch):
    with FakeGitHub() as gh:
        gh.add_repo("octo/rcb")
        monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        serve(recorded("crawl"))
        code, _, err = cli(*since(world, "--issues", "octo/rcb"))
        assert code == 0, err
        issues = gh.issues_of("octo/rcb")
        assert len(issues) == len(WITH_CODE)
        for issue in issues:
            arxiv_id = re.search(r"arXiv (\d{4}\.\d{5})\)$", issue["title"])[1]
            assert arxiv_id in WITH_CODE
            assert f"<!-- rcb-candidate: {arxiv_id} -->" in issue["body"]
            assert f"rcb task new {arxiv_id}" in issue["body"]
            assert [label["name"] for label in issue["labels"]] == [ISSUE_LABEL]

        # A rerun, with nothing new: no issue is created.
        posts = sum(1 for c in gh.calls if c.method == "POST")
        serve(recorded("crawl"))
        assert cli(*since(world, "--issues", "octo/rcb"))[0] == 0
        assert sum(1 for c in gh.calls if c.method == "POST") == posts

        # A closed issue still counts; a new paper gets exactly one.
        issues[0]["state"] = "closed"
        serve(recorded("updated"))
        code, _, err = cli(*since(world, "--issues", "octo/rcb"))
        assert code == 0, err
        titles = [i["title"] for i in gh.issues_of("octo/rcb")]
        assert len(titles) == len(WITH_CODE) + 1
        assert sum("2508.99913" in t for t in titles) == 1


def test_issues_need_a_token_before_any_crawling(cli, world, serve, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("GH_TOKEN", raising=False)
    fake = serve(recorded("crawl"))
    code, _, err = cli(*since(world, "--issues", "octo/rcb"))
    assert code == 2
    assert "GITHUB_TOKEN" in err and len(err.strip().splitlines()) == 1
    assert fake.requests == []


def test_issues_in_an_unknown_repository(cli, world, serve, monkeypatch):
    with FakeGitHub() as gh:
        monkeypatch.setenv("GITHUB_TOKEN", "t0ken")
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        fake = serve(recorded("crawl"))
        code, _, err = cli(*since(world, "--issues", "octo/missing"))
        assert code == 2
        assert err.strip().startswith("rcb: error: --issues octo/missing: GitHub answered 404")
        assert fake.requests == []


def test_a_stalled_answer_times_out_instead_of_hanging(world, serve):
    from crawler import CrawlOptions, Cutoffs, crawl
    from rcb_action.errors import RcbError

    fake = serve(recorded("crawl"))
    fake.stall(PAGE_SIZE, 1.0)
    options = CrawlOptions(
        since=dt.date(2025, 7, 1),
        queue_path=world.queue,
        cursor_path=world.cursor,
        tasks_dir=world.tasks,
        page_size=PAGE_SIZE,
        delay_seconds=0.0,
        num_retries=0,
        timeout_s=0.2,
        progress=False,
    )
    with pytest.raises(RcbError, match=r"arXiv API: .*timed out.*continue from entry 4"):
        crawl(options, Cutoffs.of([]))
    assert load_queue(world.queue).candidates  # the first page is kept
