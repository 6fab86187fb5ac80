"""Names are data: a model name is refused where it enters, or shows as text in every
output (Markdown, the terminal, HTML); markers are matched exactly; log folders and
site pages are keyed by a name no other name gets; a submitter's cutoff is labelled;
tasks still graded by in-process tests are labelled forgeable everywhere."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURE_TASKS, fenced, write_replay
from fake_github import FakeGitHub
from github import Auth, Github
from rich.console import Console

from rcb_action.errors import RcbError
from rcb_action.github import (
    build_verdict,
    check_submission,
    comment_marker,
    render_comment,
    render_summary,
    render_verdict,
    score_table,
    strip_markers,
    upsert_comment,
)
from rcb_action.models import ReplayModel, get_model, load_registry
from rcb_action.names import path_key
from rcb_action.report import Report, build_report, print_report, render_markdown
from rcb_action.results import Record, ResultStore
from rcb_action.site import build_site, window_ranking

D = dt.date

# What the red team put in model names.
IMG = "x\n<img src=x onerror=alert(1)>"
MENTION = "@org/team"
SOFT_MENTION = "acme@team"  # valid as a name: stays, but must not mention anyone
READY = "x\n### rcb: pull-request validation: ✅ ready for review"
NESTED = "<!-- rcb-comme<!-- rcb-comment:x-->nt: rcb -->"
MARKUP = "[red]x[/red][link=https://evil.example]click[/link]"
ANSI = "\x1b[2Jwiped"
EMOJI = "acme:white_check_mark:"  # valid as a name: must not become an emoji
HOSTILE = [IMG, MENTION, SOFT_MENTION, READY, NESTED, MARKUP, ANSI, EMOJI]
REFUSED = [IMG, MENTION, READY, NESTED, MARKUP, ANSI, "", "a" * 129, "a b", "ü"]


def record(model: str, task: str = "toy", snippet: str = "scale", **fields: object) -> Record:
    values: dict[str, object] = {
        "task": task,
        "snippet": snippet,
        "model": model,
        "task_sha": "t",
        "prompt_sha": f"p-{task}-{snippet}",
        "weight": 2,
        "published": D(2025, 6, 1),
        "status": "pass",
        "created_at": "2026-01-01T00:00:00+00:00",
    }
    values.update(fields)
    return Record.model_validate(values)


def results(folder: Path, records: list[Record]) -> Path:
    store = ResultStore(folder)
    for r in records:
        store.append(r)
    return folder


def registry_file(path: Path, entries: dict[str, dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"models": entries}), encoding="utf-8")
    return path


def hostile_report() -> Report:
    """A report over names no entry point accepts, as an old results file could hold."""
    records = [record(name, snippet=f"s{i}") for i, name in enumerate(HOSTILE)]
    return build_report(records, load_registry())


def assert_inert_markdown(text: str) -> None:
    """Nothing a hostile name holds acts as Markdown, HTML or a GitHub reference."""
    # HTML only escaped (\\<): the one comment is the marker of rcb's own comment.
    assert not re.search(r"(?<!\\)<(img|!--)", text.replace(comment_marker("k"), ""))
    assert "@team" not in text and "@org" not in text  # no mention
    assert ":white_check_mark:" not in text  # no emoji
    assert "\x1b" not in text and "[red]" not in text  # shown escaped: \[red\]
    assert "\\[red\\]x\\[/red\\]" in text
    # No name started a line of its own (a heading, an image, a fake verdict).
    for line in text.splitlines():
        if "ready for review" in line or "onerror" in line:
            assert line.startswith(("|", "**Model submissions**", "- ")), line


# ---- Refused where they enter -------------------------------------------------------


@pytest.mark.parametrize("name", REFUSED, ids=range(len(REFUSED)))
def test_a_bad_model_name_is_refused_on_the_command_line(name):
    with pytest.raises(RcbError) as caught:
        get_model(name, load_registry())
    message = str(caught.value)
    assert message.startswith("--model") and "\n" not in message and "\x1b" not in message


def test_the_cli_refuses_it_in_one_line(tmp_path, cli):
    code, _, err = cli("evaluate", "--model", IMG, "--tasks-dir", FIXTURE_TASKS, "--out", tmp_path)
    assert code == 2
    assert err.count("\n") == 1 and "--model: model name" in err
    assert not (tmp_path / "results.jsonl").exists()


def test_litellm_names_pass():
    for name in [
        "openai/gpt-4o",
        "anthropic/claude-3-5-sonnet-20241022",
        "bedrock/anthropic.claude-3-sonnet-20240229-v1:0",
        "vertex_ai/claude-3-5-sonnet@20240620",
        "ollama/llama3:8b",
        "fireworks_ai/accounts/fireworks/models/llama-v3-70b-instruct",
        "together_ai/togethercomputer/Llama-2-7B-32K-Instruct",
        "a" * 128,
    ]:
        assert get_model(name, load_registry()).name == name


@pytest.mark.parametrize("name", [IMG, MENTION, READY, NESTED, MARKUP, ANSI, 7, None])
def test_a_replay_files_model_field_is_checked(tmp_path, name):
    path = write_replay(
        tmp_path / "c.jsonl",
        [{"task": "toy", "snippet": "scale", "model": name, "completion": "x"}],
    )
    with pytest.raises(RcbError) as caught:
        ReplayModel(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:1: field 'model'") and "\n" not in message


@pytest.mark.parametrize(
    ("entries", "key"),
    [
        ({IMG: {"display_name": "X", "provider": "p"}}, "key 'models'"),
        ({"ok/name": {"display_name": "X\n<img src=x>", "provider": "p"}}, "display_name"),
        ({"ok/name": {"display_name": "[red]x[/red]", "provider": "p"}}, "display_name"),
        ({"ok/name": {"display_name": "X", "provider": "@team"}}, "provider"),
        (
            {"ok/name": {"display_name": "X", "provider": "p", "cutoff_source": "javascript:x"}},
            "cutoff_source",
        ),
    ],
)
def test_registry_files_are_checked(tmp_path, entries, key):
    path = registry_file(tmp_path / "extra.yaml", entries)
    with pytest.raises(RcbError) as caught:
        load_registry([path])
    message = str(caught.value)
    assert message.startswith(str(path)) and key in message and "\n" not in message


def test_a_submission_with_a_bad_name_is_a_problem(tmp_path):
    folder = tmp_path / "acme"
    registry_file(
        folder / "model.yaml",
        {READY: {"display_name": "X", "provider": "acme", "knowledge_cutoff": "2025-01-01"}},
    )
    write_replay(
        folder / "completions.jsonl", [{"task": "toy", "snippet": "scale", "completion": "x"}]
    )
    submission, problems = check_submission(folder, FIXTURE_TASKS)
    assert submission is None
    assert any("model name" in p.message and "\n" not in p.message for p in problems)


# ---- Escaped in every output --------------------------------------------------------


def test_markdown_outputs_escape_names():
    report = hostile_report()
    assert set(report.models) == set(HOSTILE)
    for text in [
        render_markdown(report),
        render_summary(report),
        render_comment(report, marker=comment_marker("k")),
    ]:
        assert_inert_markdown(text)
    # Every model is still one row of the headline table, with as many cells as the header.
    table = score_table(report).split("\n\n", 1)[0].splitlines()
    assert len(table) == 2 + len(HOSTILE)
    cells = {len(re.findall(r"(?<!\\)\|", line)) for line in table}
    assert cells == {len(re.findall(r"\|", table[0]))}


def test_the_verdict_cannot_be_forged_by_a_name():
    verdict = build_verdict(
        pull=1,
        head_sha="0" * 40,
        tasks=[],
        validate_status="",
        validate_log="",
        submissions=[READY, "acme"],
        submissions_status="1",
        submissions_report=hostile_report(),
    )
    assert verdict.status == "failed"
    text = render_verdict(verdict)
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == ["### rcb: pull-request validation: ❌ needs changes"]
    assert_inert_markdown(text)


def test_the_posted_comment_carries_one_marker_its_own(tmp_path):
    with FakeGitHub() as gh:
        gh.add_repo("octo/rcb")
        gh.add_pull("octo/rcb", 7)
        # Someone else's comment that mentions the marker, not on its first line.
        gh.add_comment("octo/rcb", 7, f"see\n{comment_marker('k')}", login="github-actions[bot]")
        issue = Github(base_url=gh.url, auth=Auth.Token("t")).get_repo("octo/rcb").get_issue(7)
        body = render_comment(hostile_report(), marker=comment_marker("k")) + "\n" + NESTED
        result = upsert_comment(issue, "k", body)
        assert result.action == "created"  # the mention elsewhere did not count
        posted = {c["id"]: c["body"] for c in gh.comments_on("octo/rcb", 7)}[result.id]
    assert posted.startswith(comment_marker("k") + "\n")
    assert re.findall(r"(?i)rcb-comment", posted) == ["rcb-comment"]


def test_markers_are_removed_to_a_fixpoint():
    assert strip_markers(NESTED) == ""
    assert (
        strip_markers("a<!--RCB-COMMENT: x-->b<!-- rcb-co<!--rcb-comment:y-->mment: z -->c")
        == "abc"
    )
    deep = "<!-- rcb-comment: k -->"
    for _ in range(5):
        deep = deep[:8] + deep + deep[8:]
    assert "rcb-comment" not in strip_markers(deep)


def test_terminal_tables_show_names_as_text(tmp_path):
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor", width=400)
    print_report(hostile_report(), console)
    text = out.getvalue()
    assert "\x1b[2J" not in text and "\x1b]8;" not in text  # no clear screen, no hyperlink
    assert "[red]x[/red][link=https://evil.example]click[/link]" in text  # shown, not applied
    assert "acme:white_check_mark:" in text  # no emoji code read
    assert "wiped" in text


def test_rcb_report_writes_them_escaped(tmp_path, cli):
    folder = results(tmp_path / "r", [record(n, snippet=f"s{i}") for i, n in enumerate(HOSTILE)])
    code, stdout, _ = cli(
        "report", folder, "--json", tmp_path / "r.json", "--markdown", tmp_path / "r.md"
    )
    assert code == 0
    assert "\x1b" not in stdout and "[red]x[/red]" in stdout
    assert_inert_markdown((tmp_path / "r.md").read_text())
    assert set(json.loads((tmp_path / "r.json").read_text())["models"]) == set(HOSTILE)


def test_the_site_escapes_names_and_gives_each_its_own_page(tmp_path):
    names = [*HOSTILE, "openai/gpt-4o", "openai-gpt-4o", "OpenAI/GPT-4o"]
    folder = results(tmp_path / "r", [record(n, snippet=f"s{i}") for i, n in enumerate(names)])
    out = build_site([folder], tmp_path / "site", tasks_dir=FIXTURE_TASKS)
    pages = sorted((out.out / "models").glob("*.html"))
    assert len(pages) == len(names)  # no two models share a page
    assert len({p.name.lower() for p in pages}) == len(names)  # not on a case-blind disk either
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+\.html", p.name) for p in pages)
    for page in out.out.rglob("*.html"):
        html = page.read_text()
        assert "<img" not in html and "<!-- rcb-comment" not in html, page
    assert "x\n&lt;img src=x onerror=alert(1)&gt;" in (out.out / "index.html").read_text()
    assert (out.out / "models" / f"{path_key('openai/gpt-4o')}.html").is_file()


def test_site_pages_do_not_depend_on_other_names(tmp_path):
    alone = results(tmp_path / "a", [record("openai/gpt-4o")])
    both = results(tmp_path / "b", [record("openai/gpt-4o"), record("openai-gpt-4o")])
    first = build_site([alone], tmp_path / "s1", tasks_dir=FIXTURE_TASKS).out
    second = build_site([both], tmp_path / "s2", tasks_dir=FIXTURE_TASKS).out
    page = f"models/{path_key('openai/gpt-4o')}.html"
    assert "GPT-4o" in (first / page).read_text() and "GPT-4o" in (second / page).read_text()
    assert "openai-gpt-4o" not in (second / page).read_text().split("<main", 1)[1]


# ---- Log folders and rcb merge ------------------------------------------------------


def test_two_names_that_sanitise_alike_keep_separate_logs(tmp_path, cli):
    answers = {"acme/coder": "y = a * x", "acme_coder": "y = x * a"}
    args = []
    for i, (model, code) in enumerate(answers.items()):
        replay = write_replay(
            tmp_path / f"r{i}.jsonl",
            [{"task": "toy", "snippet": "scale", "model": model, "completion": fenced(code)}],
        )
        args += ["--model", f"replay:{replay}"]
    out = tmp_path / "out"
    code, _, _ = cli(
        "evaluate", *args, "--tasks-dir", FIXTURE_TASKS, "--tasks", "toy", "--out", out,
        "--no-progress",
    )  # fmt: skip
    assert code in (0, 1)
    mine = {r.model: r for r in ResultStore(out).records() if r.snippet == "scale"}
    assert mine["acme/coder"].log_dir != mine["acme_coder"].log_dir
    for model, code_text in answers.items():
        completion = (out / str(mine[model].log_dir) / "completion.md").read_text()
        assert code_text in completion, model


def _old_style(folder: Path, model: str, answer: str) -> Path:
    """A results folder as an rcb before the hash suffix wrote it (cut, sanitised names)."""
    log_dir = f"logs/{re.sub(r'[^A-Za-z0-9_.-]+', '_', model)}/toy/scale/s0"
    (folder / log_dir).mkdir(parents=True)
    (folder / log_dir / "completion.md").write_text(answer)
    return results(folder, [record(model, log_dir=log_dir)])


def test_merge_refuses_two_models_in_one_folder(tmp_path, cli):
    a = _old_style(tmp_path / "a", "acme/coder", "A")
    b = _old_style(tmp_path / "b", "acme_coder", "B")
    code, _, err = cli("merge", a, b, "--out", tmp_path / "merged")
    assert code == 2 and err.count("\n") == 1
    assert "'acme/coder'" in err and "'acme_coder'" in err and "logs/acme_coder" in err
    assert not (tmp_path / "merged" / "logs").exists()


def test_merge_keeps_old_folders_readable_and_each_models_logs(tmp_path, cli):
    old = _old_style(tmp_path / "old", "acme/coder", "old answer")
    new_log = f"logs/{path_key('acme_coder')}/toy/{path_key('scale')}/s0"
    new = tmp_path / "new"
    (new / new_log).mkdir(parents=True)
    (new / new_log / "completion.md").write_text("new answer")
    results(new, [record("acme_coder", log_dir=new_log)])
    merged = tmp_path / "merged"
    assert cli("merge", old, new, "--out", merged)[0] == 0
    kept = {r.model: r for r in ResultStore(merged).records()}
    assert (merged / str(kept["acme/coder"].log_dir) / "completion.md").read_text() == "old answer"
    assert (merged / str(kept["acme_coder"].log_dir) / "completion.md").read_text() == "new answer"
    # Merging more into the same folder may not put another model into a folder it holds.
    clash = _old_style(tmp_path / "clash", "acme.coder", "clash")
    (clash / "logs" / "acme.coder").rename(clash / "logs" / "acme_coder")
    (clash / "results.jsonl").write_text(
        record("acme.coder", log_dir="logs/acme_coder/toy/scale/s0").model_dump_json() + "\n"
    )
    code, _, err = cli("merge", clash, "--out", merged)
    assert code == 2 and "'acme.coder'" in err and "'acme/coder'" in err
    assert (merged / str(kept["acme/coder"].log_dir) / "completion.md").read_text() == "old answer"


# ---- A submitter's cutoff -----------------------------------------------------------


def _submission_registry(tmp_path: Path) -> Path:
    return registry_file(
        tmp_path / "submissions" / "acme" / "model.yaml",
        {
            "acme/coder": {
                "display_name": "Acme Coder",
                "provider": "acme",
                "knowledge_cutoff": "2020-01-01",
            }
        },
    )


def test_a_submitters_cutoff_is_declared_and_never_clean(tmp_path, cli):
    registry = load_registry([_submission_registry(tmp_path)])
    assert registry.cutoff("acme/coder") is None
    assert registry.declared_cutoff("acme/coder") == D(2020, 1, 1)
    records = [
        record("acme/coder", published=D(2025, 6, 1)),
        record("openai/gpt-4o", published=D(2025, 6, 1)),
    ]
    window = window_ranking(records, registry, D(2024, 1, 1), D(2025, 12, 31))
    rows = {r.model: r for r in window.rows}
    assert rows["acme/coder"].contaminated and rows["acme/coder"].rank is None
    assert rows["acme/coder"].declared == D(2020, 1, 1)
    assert rows["openai/gpt-4o"].rank == 1  # checked cutoff (2023-10-01): clean

    report = build_report(records, registry)
    entry = report.models["acme/coder"]
    assert entry.cutoff_declared and entry.knowledge_cutoff == "2020-01-01"
    assert "declared by the submitter" in (entry.post_cutoff.note or "")
    common = report.common_post_cutoff
    assert common is not None
    assert common.after == "2023-10-01" and common.models_with_declared_cutoff == ["acme/coder"]
    assert "cutoff declared by the submitter" in render_markdown(report)
    assert "declared by the submitter" in render_comment(report, marker=comment_marker("k"))
    out = io.StringIO()
    print_report(report, Console(file=out, width=300))
    assert "cutoff declared by the submitter" in out.getvalue()

    folder = results(tmp_path / "r", records)
    site = build_site(
        [folder], tmp_path / "site", tasks_dir=FIXTURE_TASKS,
        registry_files=[tmp_path / "submissions" / "acme" / "model.yaml"],
    ).out  # fmt: skip
    index = (site / "index.html").read_text()
    assert "declared by the submitter" in index and 'id="declared-note"' in index
    window_data = json.loads(index.split('id="window-data">', 1)[1].split("</script>", 1)[0])
    acme = next(m for m in window_data["models"] if m["id"] == "acme/coder")
    assert acme["cutoff"] is None and acme["declared"] == "2020-01-01"
    model_page = (site / "models" / f"{path_key('acme/coder')}.html").read_text()
    assert "declared by the submitter" in model_page


def test_a_maintainers_registry_file_is_not_declared(tmp_path):
    path = registry_file(
        tmp_path / "ours.yaml",
        {"acme/coder": {"display_name": "A", "provider": "acme", "knowledge_cutoff": "2020-01-01"}},
    )
    registry = load_registry([path])
    assert registry.cutoff("acme/coder") == D(2020, 1, 1)
    assert registry.declared_cutoff("acme/coder") is None


def test_a_checked_submission_takes_its_cutoff_from_the_registry(tmp_path, monkeypatch):
    import rcb_action.models._registry as registry_module

    builtin = tmp_path / "registry.yaml"
    builtin.write_text(
        registry_module.BUILTIN_REGISTRY.read_text()
        + "  acme/coder:\n    display_name: Acme Coder\n    provider: acme\n"
        "    knowledge_cutoff: 2024-05-01\n    submitted: true\n"
    )
    monkeypatch.setattr(registry_module, "BUILTIN_REGISTRY", builtin)
    registry = load_registry([_submission_registry(tmp_path)])  # it declares 2020-01-01
    assert registry.cutoff("acme/coder") == D(2024, 5, 1)
    assert registry.declared_cutoff("acme/coder") is None
    report = build_report([record("acme/coder")], registry)
    assert not report.models["acme/coder"].cutoff_declared
    assert "declared" not in render_markdown(report)


def test_a_submission_cannot_redefine_a_builtin_model(tmp_path):
    path = registry_file(
        tmp_path / "evil" / "model.yaml",
        {
            "openai/gpt-4o": {
                "display_name": "A",
                "provider": "openai",
                "knowledge_cutoff": "2030-01-01",
            }
        },
    )
    with pytest.raises(RcbError, match="built-in registry"):
        load_registry([path])


# ---- Forgeable labels ---------------------------------------------------------------


def test_in_process_tasks_are_labelled_forgeable_in_every_output(tmp_path, cli):
    records = [
        record("m", task="toy", snippet="scale"),  # in-process: the default, as in old records
        record("m", task="toy", snippet="norm", status="fail", failure_class="assertion"),
        record("m", task="casetoy", snippet="scale", grading="cases"),
        record("m", task="casetoy", snippet="norm", grading="cases"),
        record("m", task="casetoy", snippet="shift", grading="cases"),
    ]
    folder = results(tmp_path / "r", records)
    code, stdout, _ = cli(
        "report", folder, "--json", tmp_path / "r.json", "--markdown", tmp_path / "r.md"
    )
    assert code == 0
    entry = json.loads((tmp_path / "r.json").read_text())["models"]["m"]
    assert entry["tasks"]["toy"]["grading"] == "in-process"
    assert entry["tasks"]["casetoy"]["grading"] == "cases"
    assert entry["forgeable_snippets"] == 2 and entry["snippets"] == 5

    toy_row = next(line for line in stdout.splitlines() if "│ toy" in line)
    case_row = next(line for line in stdout.splitlines() if "│ casetoy" in line)
    assert "in-process tests (forgeable)" in toy_row and "forgeable" not in case_row
    assert "2 of 5" in stdout

    markdown = (tmp_path / "r.md").read_text()
    assert "| toy | in-process tests (forgeable) |" in markdown
    assert "| casetoy | cases and checks |" in markdown
    assert "In-process tests (forgeable): 1 of 2 task(s) (toy)" in markdown

    report = Report.load(tmp_path / "r.json")
    comment = render_comment(report, marker=comment_marker("k"))
    headline = comment.split("<details>", 1)[0]
    assert "In-process (forgeable)" in headline and "| 2 |" in headline
    assert "In-process tests (forgeable): 1 of 2 task(s) (toy)" in headline

    site = build_site([folder], tmp_path / "site", tasks_dir=FIXTURE_TASKS).out
    toy, casetoy = (
        (site / "tasks" / "toy.html").read_text(),
        (site / "tasks" / "casetoy.html").read_text(),
    )
    assert 'id="forgeable-warning"' in toy and "in-process tests (forgeable)" in toy
    assert 'id="forgeable-warning"' not in casetoy and "cases and checks" in casetoy
    footnote = (
        (site / "index.html").read_text().split('id="forgeable-note">', 1)[1].split("</p>")[0]
    )
    assert (
        "1 of the 2 papers with results" in footnote
        and ">toy<" in footnote
        and "casetoy" not in footnote
    )
