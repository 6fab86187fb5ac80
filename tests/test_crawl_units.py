"""The crawler's parts on their own: code links, scoring, versions, categories, the queue file."""

from __future__ import annotations

import datetime as dt

import pytest

from crawler import (
    DEFAULT_CATEGORIES,
    Candidate,
    CodeLink,
    Cutoffs,
    QueueLink,
    build_query,
    category_matcher,
    domain_of,
    find_code_links,
    load_queue,
    merge,
    parse_arxiv_id,
    render_queue,
    score,
    write_queue,
)
from crawler._queue import Queue


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Code is available at https://github.com/fixture-lab/gated-sparse.",
            [CodeLink("repository", "https://github.com/fixture-lab/gated-sparse")],
        ),
        (
            "see github.com/Org/Repo.git/tree/main/src (and https://github.com/Org/Repo)",
            [CodeLink("repository", "https://github.com/Org/Repo")],
        ),
        (
            "Code: https://gitlab.com/group/sub/repo/-/tree/main",
            [CodeLink("repository", "https://gitlab.com/group/sub/repo")],
        ),
        (
            "Weights at huggingface.co/org/model-x; demo https://huggingface.co/spaces/org/demo/tree",
            [
                CodeLink("huggingface", "https://huggingface.co/org/model-x"),
                CodeLink("huggingface", "https://huggingface.co/spaces/org/demo"),
            ],
        ),
        (
            "archived at https://doi.org/10.5281/zenodo.99908. Journal: https://doi.org/10.0000/x",
            [CodeLink("archive", "https://doi.org/10.5281/zenodo.99908")],
        ),
        (
            "Project page: https://fixture-fin.github.io/rough-sig/",
            [CodeLink("project page", "https://fixture-fin.github.io/rough-sig")],
        ),
        (
            "Our project website is https://example.org/paper and a video https://youtu.be/x",
            [CodeLink("project page", "https://example.org/paper")],
        ),
        ("Published in https://example.org/journal/123", []),
        ("Licence https://creativecommons.org/licenses/by/4.0/ and arXiv:2501.00001", []),
        ("Sponsor us at https://github.com/sponsors/someone", []),
        (
            "Code: https://anonymous.4open.science/r/fixture-7A1B/README.md",
            [CodeLink("repository", "https://anonymous.4open.science/r/fixture-7A1B")],
        ),
    ],
)
def test_code_links(text, expected):
    assert find_code_links(text) == expected


def test_code_links_from_abstract_and_comment_once_each():
    links = find_code_links(
        "Code at https://github.com/a/b.", "12 pages. Code: github.com/a/b and github.com/c/d"
    )
    assert [link.url for link in links] == ["https://github.com/a/b", "https://github.com/c/d"]


def test_arxiv_ids():
    assert parse_arxiv_id("2507.99901v2") == ("2507.99901", 2)
    assert parse_arxiv_id("arXiv:2507.99901") == ("2507.99901", None)
    assert parse_arxiv_id("hep-th/0101001v1") is None
    assert parse_arxiv_id("2507.999") is None


def test_default_categories_span_ml_and_three_other_sciences():
    domains = {domain_of(c.replace(".*", ".XX")) for c in DEFAULT_CATEGORIES}
    assert "ml" in domains
    assert len(domains - {"ml", "other", "computing", "statistics", "mathematics"}) >= 3


def test_category_patterns():
    matches = category_matcher(["cs.LG", "q-bio.*", "hep-th"])
    assert matches(["cs.LG"]) and matches(["stat.ML", "cs.LG"])
    assert matches(["q-bio.QM"]) and not matches(["q-fin.CP"])
    assert matches(["hep-th"]) and not matches(["cs.CL"])


def test_query_fixes_both_ends_of_the_window():
    query = build_query(("cs.LG", "q-fin.*"), dt.date(2025, 3, 2), dt.datetime(2025, 11, 1, 12, 5))
    assert query == "(cat:cs.LG OR cat:q-fin.*) AND submittedDate:[202503020000 TO 202511011205]"


CUTOFFS = Cutoffs.of([dt.date(2024, 6, 1), dt.date(2025, 3, 1), None])


def _score(**changes):
    given = {
        "links": [CodeLink("repository", "https://github.com/a/b")],
        "published": dt.date(2025, 7, 1),
        "primary_category": "cs.CL",
        "domain": "ml",
        "cutoffs": CUTOFFS,
    }
    return score(**{**given, **changes})


def test_each_score_component_counts_once_with_its_reason():
    base, reasons = _score()
    assert len(reasons) == 2  # code and recency
    page, _ = _score(links=[CodeLink("project page", "https://x.github.io/p")])
    assert page < base  # runnable code beats a page about it
    both, _ = _score(
        links=[
            CodeLink("project page", "https://x.github.io/p"),
            CodeLink("repository", "https://github.com/a/b"),
        ]
    )
    assert both == base  # the best link counts, not the number of links
    older, older_reasons = _score(published=dt.date(2024, 12, 1))
    assert older < base and "after 1 of 2 registered cutoffs" in older_reasons[-1]
    oldest, _ = _score(published=dt.date(2024, 1, 1))
    assert oldest < older
    computational, _ = _score(primary_category="cs.LG")
    assert computational == base + 1
    outside, outside_reasons = _score(primary_category="q-bio.QM", domain="biology")
    assert outside > computational
    assert outside_reasons[-1] == "domain: biology, outside machine learning (+2)"


def _candidate(arxiv="2507.99901", version=1, title="Fixture: A", **changes) -> Candidate:
    fields = {
        "arxiv": arxiv,
        "version": version,
        "title": title,
        "published": dt.date(2025, 7, 1),
        "updated": dt.date(2025, 7, 1),
        "primary_category": "cs.LG",
        "categories": ["cs.LG"],
        "domain": "ml",
        "score": 5,
        "reasons": ["code: repository https://github.com/a/b (+3)"],
        "code_links": [QueueLink(kind="repository", url="https://github.com/a/b")],
    }
    return Candidate(**{**fields, **changes})


def test_merge_keeps_the_latest_version_and_the_triage():
    v1 = _candidate(status="rejected", note="out of scope")
    v2 = _candidate(version=2, title="Fixture: A, revised")
    merged = merge(v1, v2)
    assert (merged.version, merged.title) == (2, "Fixture: A, revised")
    assert (merged.status, merged.note) == ("rejected", "out of scope")
    assert merge(v2, v1) is v2


def test_queue_file_is_sorted_and_stable(tmp_path):
    path = tmp_path / "queue.yaml"
    candidates = [
        _candidate("2507.99903", score=2),
        _candidate("2507.99902", score=7),
        _candidate("2507.99901", score=7),
    ]
    queue = Queue(path, {c.arxiv: c for c in candidates})
    assert write_queue(queue) is True
    assert write_queue(load_queue(path)) is False  # read back and written: nothing to change
    assert [c.arxiv for c in load_queue(path).sorted()] == [
        "2507.99901",
        "2507.99902",
        "2507.99903",
    ]
    assert render_queue(reversed(candidates)) == path.read_text()


def test_queue_errors_name_the_file_and_key(tmp_path):
    from rcb_action.errors import RcbError

    path = tmp_path / "queue.yaml"
    path.write_text("candidates: {}\n")
    with pytest.raises(RcbError, match=r"queue.yaml: expected a top-level 'candidates:' list"):
        load_queue(path)
    path.write_text(
        render_queue([_candidate(), _candidate()]).replace("status: new", "status: maybe", 1)
    )
    with pytest.raises(RcbError, match=r"key 'candidates.0.status'"):
        load_queue(path)
    text = render_queue([_candidate()])
    path.write_text(text + text.split("candidates:\n", 1)[1])
    with pytest.raises(RcbError, match=r"arXiv 2507.99901 is listed twice"):
        load_queue(path)


AWKWARD = [
    "plain",
    "yes",
    "No",
    "null",
    "~",
    "3.14",
    "2025-07-01",
    "a: b",
    "# not a comment",
    "- not a list",
    "quote \" and 'single'",
    "back\\slash $\\alpha$",
    "tab\tand\nnewline",
    "unicode é ü 漢字 😀",
    "line\u2028separator",
    "next\x85line",
    "bell\x07",
    " leading",
    "trailing ",
    "https://github.com/a/b",
    "colon:",
    "@at %pct {brace} [bracket] *star &amp !bang |pipe >gt `tick`",
]


@pytest.mark.parametrize("text", AWKWARD)
def test_queue_file_reads_back_every_string_as_written(tmp_path, text):
    candidate = _candidate(title=text, note=text, authors=[text, "B"], abstract=text, comment=text)
    path = tmp_path / "queue.yaml"
    assert write_queue(Queue(path, {candidate.arxiv: candidate})) is True
    assert load_queue(path).candidates[candidate.arxiv] == candidate
