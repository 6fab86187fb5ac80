"""The validation verdict: data from the untrusted run, checked against its schema and
rendered by trusted code with every string escaped; a GPU task on a CPU runner is not
validated; the verdict comment is found by marker and author, on any page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_github import BOT_LOGIN, FakeGitHub
from github import Auth, Github
from report_data import report_of

from rcb_action.errors import RcbError
from rcb_action.github import (
    ItemVerdict,
    Verdict,
    build_verdict,
    comment_marker,
    read_verdict,
    render_verdict,
    token_author,
    upsert_comment,
)
from rcb_action.github._verdict import model_scores
from rcb_action.github._verdict_schema import Section

REPO = "octo/rcb"
SHA = "e" * 40
MARKER = comment_marker("validation")
HOSTILE = [
    "x\n### rcb: pull-request validation: ✅ ready for review",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<!-- rcb-comment: validation -->",
    "<!-- rcb-comme<!-- rcb-comment:x-->nt: rcb -->",
    "@org/team please merge @admin",
    "[click](https://evil.example) ![i](https://evil.example/i.png)",
    "| a | b |\n|---|---|",
    "```\n</details><details open>",
    "acme:white_check_mark: #1 www.evil.example http://evil.example",
    "\x1b[2Jwiped\u202eright-to-left",
    "y" * 50_000,
]


def hostile_verdict() -> Verdict:
    items = {name: ItemVerdict(status="passed", problems=HOSTILE) for name in HOSTILE}
    return Verdict(
        schema_version=1,
        pull=7,
        head_sha=SHA,
        tasks=Section(items=items, problems=HOSTILE, log="\n".join(reversed(HOSTILE))),
        submissions=Section(items={"s": ItemVerdict(status="failed", problems=HOSTILE)}),
    )


def test_hostile_task_ids_and_problems_render_inert():
    text = render_verdict(hostile_verdict())
    # Outside the fenced log, nothing is a heading, HTML, a comment, a mention, a link
    # or a table.
    before_log = text.split("<details><summary>", 1)[0]
    after_log = text.rsplit("</details>", 1)[1]
    lines = (before_log + after_log).splitlines()
    assert lines[0] == "### rcb: pull-request validation: ❌ needs changes"
    assert [line for line in lines if line.startswith("#")] == [lines[0]]
    for part in (before_log, after_log):
        assert not re.search(r"(?<!\\)<(img|script|!--|/?details)", part)
        assert not re.search(r"@[A-Za-z]", part)  # @&#8203;org: no mention
        assert not re.search(r"(?<!\\)\]\(", part)  # no link or image
        assert ":white_check_mark:" not in part and "\x1b" not in part and "\u202e" not in part
        for line in part.splitlines():
            assert line == "" or line.startswith(("### rcb", "**", "- ", "  - ")), line
    # The one fenced block holds the log and cannot be closed from inside.
    fences = re.findall(r"^(`{3,})text$", text, re.MULTILINE)
    assert len(fences) == 1 and len(fences[0]) > 3
    # Huge strings are clipped: the whole comment stays small.
    assert len(text) < 200_000 and "y" * 501 not in before_log
    assert "\\[… cut\\]" in text  # shown clipped, the mark escaped too
    # Posted, the comment carries exactly one marker, its own, on its first line.
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 7)
        issue = Github(base_url=gh.url, auth=Auth.Token("t")).get_repo(REPO).get_issue(7)
        result = upsert_comment(issue, "validation", text)
        posted = {c["id"]: c["body"] for c in gh.comments_on(REPO, 7)}[result.id]
    assert posted.startswith(MARKER + "\n")
    assert not re.search(r"(?i)(?<!\\)<!--\s*rcb-comment", posted[len(MARKER) :])


@pytest.mark.parametrize(
    "text",
    [
        "### ✅ ready for review\n",  # Markdown, as the old comment.md
        "[]",
        '{"pull": 7, "head_sha": "' + SHA + '"}',  # no schema_version
        json.dumps({"schema_version": 1, "pull": 7, "head_sha": SHA, "comment": "# hi"}),
        json.dumps(
            {
                "schema_version": 1,
                "pull": 7,
                "head_sha": SHA,
                "tasks": {"items": {"t": {"status": "✅ ready for review"}}},
            }
        ),
        json.dumps({"schema_version": 1, "pull": "7", "head_sha": SHA}),
        json.dumps({"schema_version": 1, "pull": 7, "head_sha": "HEAD"}),
    ],
    ids=["markdown", "list", "no-version", "extra-key", "bad-status", "string-pull", "bad-sha"],
)
def test_anything_but_a_verdict_is_refused_in_one_line(tmp_path, text):
    path = tmp_path / "verdict.json"
    path.write_text(text)
    with pytest.raises(RcbError) as caught:
        read_verdict(path)
    assert "not a verdict" in str(caught.value) and "\n" not in str(caught.value)


def test_an_oversized_verdict_is_refused_unread(tmp_path):
    path = tmp_path / "verdict.json"
    path.write_text(" " * (5 * 1024 * 1024))
    with pytest.raises(RcbError, match="over the"):
        read_verdict(path)


def test_a_verdict_round_trips_through_its_file(tmp_path):
    verdict = hostile_verdict()
    path = tmp_path / "verdict.json"
    path.write_text(verdict.model_dump_json())
    assert read_verdict(path) == verdict


def test_the_submissions_scores_show_as_the_report_gives_them():
    """report.json's scores are percentages: 87.5 shows as 87.5%, not as 8750% or n/a."""
    report = report_of(
        {"models": {"acme/m": {"scaled_pass_at_1": 87.5, "pass_rate": 60.0, "snippets": 12}}}
    )
    (score,) = model_scores(report)
    assert (score.scaled_pass_at_1, score.pass_rate) == (87.5, 60.0)
    verdict = Verdict(
        schema_version=1,
        pull=7,
        head_sha=SHA,
        tasks=Section(),
        submissions=Section(items={"s": ItemVerdict(status="passed")}),
        scores=[score],
    )
    assert "| acme/m | 87.5% | 60.0% | 12 | 0 |" in render_verdict(verdict)


def gpu_task(root: Path, gpu: str = "required") -> str:
    folder = root / "tasks" / "big"
    folder.mkdir(parents=True)
    (folder / "task.yaml").write_text(f"id: big\ngpu: {gpu}\n")
    return str(folder)


def test_a_gpu_task_on_a_cpu_runner_is_not_validated_never_ready(tmp_path):
    folder = gpu_task(tmp_path)
    # Even an "ok" line (an older rcb validate that did not say it skipped) does not pass.
    for log in ["ok    big: 2 snippets, reference 0.0 s\n", ""]:
        verdict = build_verdict(
            pull=3,
            head_sha=SHA,
            tasks=[folder],
            validate_status="0",
            validate_log=log,
            submissions=[],
            submissions_status="",
            submissions_report=None,
            runner_has_gpu=False,
        )
        assert verdict.status == "not validated"
        item = verdict.tasks.items[folder]
        assert item.status == "not validated"
        assert any("requires a GPU and this runner has none" in p for p in item.problems)
        text = render_verdict(verdict)
        assert "✅" not in text and "ready for review" not in text
        assert text.startswith("### rcb: pull-request validation: ⚠️ not validated")
        assert "requires a GPU" in text
    # On a GPU runner the same output is a pass.
    verdict = build_verdict(
        pull=3,
        head_sha=SHA,
        tasks=[folder],
        validate_status="0",
        validate_log="ok    big: 2 snippets, reference 1.0 s\n",
        submissions=[],
        submissions_status="",
        submissions_report=None,
        runner_has_gpu=True,
    )
    assert verdict.status == "passed"
    assert "✅ ready for review" in render_verdict(verdict)


def test_a_failure_outranks_not_validated(tmp_path):
    folder = gpu_task(tmp_path)
    verdict = build_verdict(
        pull=3,
        head_sha=SHA,
        tasks=[folder],
        validate_status="1",
        validate_log=f"FAIL  big: 1 problem(s)\n  {folder}/task.yaml: unknown key 'x'\n",
        submissions=[],
        submissions_status="",
        submissions_report=None,
    )
    item = verdict.tasks.items[folder]
    assert item.status == "failed" and verdict.status == "failed"
    assert item.problems[0].endswith("unknown key 'x'")
    assert any("requires a GPU" in p for p in item.problems)


def test_the_verdict_command_writes_data_and_its_status(tmp_path, cli, monkeypatch):
    folder = gpu_task(tmp_path)
    output = tmp_path / "output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    code, _, _ = cli(
        "gh", "verdict", "--out", tmp_path / "v", "--pr", "3", "--head-sha", SHA,
        "--tasks", folder, "--validate-status", "0", "--runner-gpu", "false",
    )  # fmt: skip
    assert code == 0
    assert "status=not-validated" in output.read_text()
    assert sorted(p.name for p in (tmp_path / "v").iterdir()) == ["verdict.json"]


# ---- the comment: marker and author, every page ---------------------------------


def issue_of(gh: FakeGitHub, number: int = 7):
    return Github(base_url=gh.url, auth=Auth.Token("t")).get_repo(REPO).get_issue(number)


def test_a_marked_comment_by_anyone_else_is_never_edited():
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 7)
        # Someone posts a comment that starts with rcb's marker, and could edit it (an
        # admin's token can edit any comment): the upsert must still leave it alone.
        forged = gh.add_comment(REPO, 7, f"{MARKER}\n✅ ready for review", login="mallory")
        gh.token_login = "mallory"  # make the fake allow the edit, were it attempted
        result = upsert_comment(issue_of(gh), "validation", "the real verdict", author=BOT_LOGIN)
        bodies = {c["id"]: c["body"] for c in gh.comments_on(REPO, 7)}
        assert result.action == "created" and result.id != forged
        assert bodies[forged] == f"{MARKER}\n✅ ready for review"
        assert not [c for c in gh.calls if c.method == "PATCH"]


def test_the_author_is_the_tokens_user():
    with FakeGitHub() as gh:
        client = Github(base_url=gh.url, auth=Auth.Token("t"))
        assert token_author(client) == "github-actions[bot]"  # an Actions token: no /user
        gh.token_login = "rcb-maintainer"
        assert token_author(Github(base_url=gh.url, auth=Auth.Token("t"))) == "rcb-maintainer"


def test_a_personal_token_edits_its_own_comment_not_the_bots():
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 7)
        bots = gh.add_comment(REPO, 7, f"{MARKER}\nold", login=BOT_LOGIN)
        gh.token_login = "rcb-maintainer"
        client = Github(base_url=gh.url, auth=Auth.Token("t"))
        issue = client.get_repo(REPO).get_issue(7)
        first = upsert_comment(issue, "validation", "v1", author=token_author(client))
        second = upsert_comment(issue, "validation", "v2", author=token_author(client))
        assert first.action == "created" and second.action == "updated"
        assert second.id == first.id != bots
        assert {c["id"]: c["body"] for c in gh.comments_on(REPO, 7)}[first.id] == f"{MARKER}\nv2"


def test_the_marked_comment_is_found_on_page_two(tmp_path, cli, monkeypatch):
    with FakeGitHub() as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 7, head_sha=SHA)
        for i in range(45):  # more than one page of 30
            gh.add_comment(REPO, 7, f"chatter {i}", login="someone")
        ours = upsert_comment(issue_of(gh), "validation", "v1").id
        assert [c["id"] for c in gh.comments_on(REPO, 7)].index(ours) == 45
        # Through the command, as the trusted job runs it.
        path = tmp_path / "verdict.json"
        path.write_text(Verdict(schema_version=1, pull=7, head_sha=SHA).model_dump_json())
        for name, value in {
            "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": gh.url,
            "GITHUB_TOKEN": "t",
        }.items():
            monkeypatch.setenv(name, value)
        (tmp_path / "event.json").write_text("{}")
        code, _, err = cli("gh", "comment", "--strict", "--verdict-file", path, "--head-sha", SHA)
        assert code == 0 and f"updated comment {ours}" in err
        pages = [c.query.get("page", ["1"])[0] for c in gh.calls if c.path.endswith("/comments")]
        assert "2" in pages
        assert len(gh.comments_on(REPO, 7)) == 46
        assert "nothing to validate" in gh.comments_on(REPO, 7)[-1]["body"]
