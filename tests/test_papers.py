"""The paper is the paper: arXiv's LaTeX of a pinned version, flattened, cleaned, cached;
no other text is ever substituted. Every network call goes to a local fake e-print
server (tests/fake_eprint.py), or is refused by a blocked socket."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shutil
import socket
import threading
from pathlib import Path

import pytest
from conftest import FIXTURE_TASKS
from fake_eprint import FakeEprints, build_eprints

from rcb_action.errors import RcbError, TaskError
from rcb_action.models import LiteLLMModel, load_registry
from rcb_action.papers import (
    CLEANER_VERSION,
    EprintClient,
    FetchError,
    NoLatexSource,
    NoSource,
    PaperUnavailable,
    _arxiv,
    clean_latex,
    eprint_text,
    fetch_paper,
    find_main,
    papers_dir,
    strip_comments,
    unpack_eprint,
)
from rcb_action.prompts import build_prompt
from rcb_action.results import Record, ResultStore
from rcb_action.runner import EvalConfig, evaluate
from rcb_action.tasks import load_task

SINGLE, TARBALL, PDF_ONLY = "2401.00001v1", "2401.00002v2", "2401.00003v1"

# The flattened text of the tarball fixture, byte for byte: the same on every machine.
TARBALL_TEXT = r"""\documentclass[11pt]{article}
\newcommand{\R}{\mathbb{R}}

\begin{document}
\title{A Tarball Fixture Paper}
\maketitle
\section{Introduction}
We study a toy problem in $\R^d$.

\section{Method}
The update is $x \leftarrow a x + b$: a scale, then a shift.

\section{Experiments}
We report 100\% of the runs.

\appendix
\section{Proofs}
The norm is $\|x\| = \sqrt{\sum_i x_i^2}$.

\end{document}
"""


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("RCB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(_arxiv, "BACKOFF_S", 0.01)
    return tmp_path / "cache" / "papers"


@pytest.fixture
def fake(monkeypatch):
    with FakeEprints() as server:
        monkeypatch.setenv("RCB_ARXIV_URL", server.url)
        yield server


@pytest.fixture
def no_network(monkeypatch):
    """Every connection except to this machine fails, as on a machine with no network."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost"):
            raise OSError(101, "Network is unreachable (blocked by the test)")
        return real_connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host not in ("127.0.0.1", "::1", "localhost", None):
            raise socket.gaierror(-3, "Temporary failure in name resolution (blocked)")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.delenv("RCB_ARXIV_URL", raising=False)


def pinned_task(root: Path, name: str = TARBALL, task_id: str = "toy") -> Path:
    """A copy of the toy fixture task whose paper is the fixture e-print ``name``."""
    tasks = root / "tasks"
    shutil.copytree(FIXTURE_TASKS / "_envs", tasks / "_envs", dirs_exist_ok=True)
    target = tasks / task_id
    shutil.copytree(FIXTURE_TASKS / "toy", target)
    (target / "paper.tex").unlink()
    arxiv, version = name.split("v")
    yaml_path = target / "task.yaml"
    text = yaml_path.read_text().replace(
        'arxiv: "0000.00000"', f'arxiv: "{arxiv}"\narxiv_version: {version}'
    )
    text = text.replace("paper: {source: vendored, license: CC0-1.0}", "paper: {source: arxiv}")
    yaml_path.write_text(text.replace("id: toy", f"id: {task_id}"))
    return tasks


# --- the cleaner, on its own ---------------------------------------------------------


def test_single_gzipped_tex_is_cleaned():
    text = eprint_text(build_eprints()[SINGLE][0])
    assert "SECRET" not in text  # comments, figure captions, what follows \end{document}
    assert text.startswith("\\documentclass{article}\n")
    assert text.endswith("\\end{document}\n")
    assert "The step size is 5\\% of the gradient norm.\n" in text  # \% is not a comment
    assert "\\url{https://example.org/a%20b}" in text  # nor a % in a URL
    assert "rate = 0.05  % this percent sign is code, kept" in text  # verbatim untouched
    assert "b\\|^2$%\njoined to this line." in text  # the % that joins two lines stays
    assert "\\includegraphics" not in text and "\\begin{figure}" not in text
    assert "\\bibliography" not in text
    assert "\n\n\n" not in text and "Three blank lines above become one." in text


def test_tarball_is_flattened_from_its_main_file():
    files = unpack_eprint(build_eprints()[TARBALL][0])
    assert find_main(files) == "ms.tex"  # not response.tex, the other \documentclass
    text = eprint_text(build_eprints()[TARBALL][0])
    assert text == TARBALL_TEXT
    # \include, \input without braces, \subfile with its extension, \import{dir}{file}
    order = ["Introduction", "Method", "Experiments", "Proofs"]
    assert [text.index(f"\\section{{{s}}}") for s in order] == sorted(
        text.index(f"\\section{{{s}}}") for s in order
    )


def test_pdf_and_postscript_have_no_source():
    with pytest.raises(NoSource):
        unpack_eprint(build_eprints()[PDF_ONLY][0])
    with pytest.raises(NoSource):
        unpack_eprint(b"%!PS-Adobe-3.0\n")


def test_comment_rules():
    assert strip_comments("a % note\nb") == "a\nb"
    assert strip_comments("% only a comment\nb") == "b"
    assert strip_comments("x\\\\% after a line break\ny") == "x\\\\%\ny"
    assert strip_comments("\\verb|50%| kept % cut") == "\\verb|50%| kept"
    assert strip_comments("\\href{http://a/%41}{link} % cut") == "\\href{http://a/%41}{link}"
    text = "\\begin{lstlisting}\nx = 1 % code\n\\end{lstlisting}\n% gone\n"
    assert strip_comments(text) == "\\begin{lstlisting}\nx = 1 % code\n\\end{lstlisting}\n"
    assert "hidden" not in clean_latex("a\n\\iffalse hidden \\ifx a b \\fi hidden \\fi\nb\n")
    assert clean_latex("a\r\n\r\n\r\n\r\nb  \r\n") == "a\n\nb\n"


def test_archive_members_cannot_leave_it():
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in (("../evil.tex", b"\\documentclass{x}EVIL"), ("ok.tex", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("link.tex")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    assert unpack_eprint(buffer.getvalue()) == {"ok.tex": b"x"}


# --- the client: one at a time, polite, retried ------------------------------------------


def test_client_waits_between_requests_and_says_who_it_is(fake):
    client = EprintClient(url=fake.url, delay_s=0.2, backoff_s=0.01)
    threads = [
        threading.Thread(target=client.fetch, args=(arxiv, int(v)))
        for arxiv, v in (n.split("v") for n in (SINGLE, TARBALL, SINGLE))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    times = sorted(seen.at for seen in fake.requests)
    assert len(times) == 3
    assert all(b - a >= 0.19 for a, b in itertools.pairwise(times))
    assert all(seen.user_agent.startswith("rcb/") for seen in fake.requests)
    assert "+https://" in fake.requests[0].user_agent
    assert EprintClient(url="https://arxiv.org", delay_s=0).delay_s == 3.0  # never faster


def test_slow_answer_times_out_and_is_retried(fake):
    fake.slow(TARBALL, 2.0)
    client = EprintClient(url=fake.url, timeout_s=0.5, backoff_s=0.01)
    data = client.fetch("2401.00002", 2)
    assert eprint_text(data) == TARBALL_TEXT
    assert fake.asked(TARBALL) == 2


def test_rate_limit_honours_retry_after_and_gives_up(fake):
    waits: list[float] = []
    fake.status(SINGLE, 503, times=1, Retry_After="7")
    client = EprintClient(url=fake.url, backoff_s=0.01, sleep=waits.append)
    client.fetch("2401.00001", 1)
    assert any(w >= 7 for w in waits) and fake.asked(SINGLE) == 2
    fake.status(SINGLE, 503, times=4)
    with pytest.raises(FetchError, match="no answer after 4 tries"):
        client.fetch("2401.00001", 1)


def test_404_is_final(fake, cache, tmp_path):
    task = load_task(pinned_task(tmp_path, "2401.09999v1") / "toy")
    with pytest.raises(PaperUnavailable) as info:
        fetch_paper(task)
    assert fake.asked("2401.09999v1") == 1  # not retried
    assert "arxiv_version" in str(info.value) and "\n" not in str(info.value)


# --- pinned, cached, never substituted ---------------------------------------------------


def test_paper_is_fetched_once_cached_and_pinned(fake, cache, tmp_path):
    task = load_task(pinned_task(tmp_path) / "toy")
    paper = fetch_paper(task)
    assert paper.text == TARBALL_TEXT and paper.origin == f"arXiv {TARBALL}"
    assert paper.sha == hashlib.sha256(TARBALL_TEXT.encode()).hexdigest()
    assert (cache / f"{TARBALL}.tex").read_text() == TARBALL_TEXT
    meta = json.loads((cache / f"{TARBALL}.json").read_text())
    assert meta["paper_sha"] == paper.sha and meta["cleaner"] == CLEANER_VERSION
    assert fetch_paper(task) == paper and fake.asked(TARBALL) == 1  # from the cache


def test_a_text_made_by_an_older_cleaner_is_remade_offline(fake, cache, tmp_path, no_network):
    task = load_task(pinned_task(tmp_path) / "toy")
    papers_dir().joinpath(f"{TARBALL}.eprint").write_bytes(build_eprints()[TARBALL][0])
    papers_dir().joinpath(f"{TARBALL}.tex").write_text("an old cleaner's text\n")
    papers_dir().joinpath(f"{TARBALL}.json").write_text(json.dumps({"cleaner": 0}))
    assert fetch_paper(task).text == TARBALL_TEXT


def test_pdf_only_is_refused_and_remembered(fake, cache, tmp_path):
    task = load_task(pinned_task(tmp_path, PDF_ONLY) / "toy")
    for _ in range(2):
        with pytest.raises(NoLatexSource) as info:
            fetch_paper(task)
        assert "source: vendored" in str(info.value)
    assert fake.asked(PDF_ONLY) == 1
    assert not (cache / f"{PDF_ONLY}.tex").exists()


def test_rcb_prompt_prints_the_flattened_latex_the_same_every_time(fake, cache, tmp_path, cli):
    tasks = pinned_task(tmp_path)
    runs = []
    for _ in range(2):
        code, out, err = cli("prompt", "toy", "scale", "--tasks-dir", tasks)
        assert code == 0, err
        runs.append(out)
        shutil.rmtree(cache)  # fetched again: the same bytes
    assert runs[0] == runs[1]
    assert runs[0].startswith(
        "## The paper: rcb test fixture: a toy module with nested snippets "
        f"(arXiv 2401.00002v2)\n\n{TARBALL_TEXT}"
    )
    assert "SECRET" not in runs[0]
    assert f"paper_sha {hashlib.sha256(TARBALL_TEXT.encode()).hexdigest()}" in err


def test_the_paper_section_is_the_same_bytes_for_every_snippet(fake, cache, tmp_path):
    task = load_task(pinned_task(tmp_path) / "toy")
    prompts = [build_prompt(task, name) for name in task.snippet_names()]
    prefixes = {p.text[: p.prefix_chars] for p in prompts}
    assert len(prefixes) == 1 and TARBALL_TEXT in prefixes.pop()
    assert len({p.sha for p in prompts}) == len(prompts)
    without = build_prompt(task, "scale", paper="without")
    assert without.prefix_chars == 0 and without.paper_sha is None
    assert without.text.startswith("## Your task")


def test_paper_sha_in_records_and_report(fake, cache, tmp_path, cli):
    tasks = pinned_task(tmp_path)
    registry = load_registry()
    model = LiteLLMModel(
        "openai/gpt-4o",
        registry.get("openai/gpt-4o"),
        backoff_s=0.01,
        mock_responses=["```python\ny = a * x\n```\n"] * 5,
    )
    out = tmp_path / "out"
    config = EvalConfig(
        models=["openai/gpt-4o", "reference"],
        out=out,
        tasks_dir=tasks,
        workers=1,
        progress=False,
    )
    evaluate(config, model_objects=[model, _reference()])
    sha = hashlib.sha256(TARBALL_TEXT.encode()).hexdigest()
    records = ResultStore(out).records()
    assert {r.model for r in records} == {"openai/gpt-4o", "reference"}
    assert all(r.paper == "with" and r.paper_sha == sha for r in records)
    code, _, _ = cli("report", out, "--json", tmp_path / "report.json", "--quiet")
    assert code == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["papers"]["toy"]["paper_sha"] == sha


def _reference():
    from rcb_action.models import ReferenceModel

    return ReferenceModel()


def test_offline_with_an_empty_cache(cache, tmp_path, cli, no_network, monkeypatch):
    """reference and null need no paper; a model that reads the prompt stops before any
    attempt, with one line naming the task and the fix, and nothing is recorded."""
    tasks = pinned_task(tmp_path)
    out = tmp_path / "out"
    args = ("--tasks-dir", tasks, "--out", out, "--no-progress", "--workers", "1")
    code, _, err = cli("evaluate", "--model", "reference", "--model", "null", *args)
    assert code == 0, err
    records = ResultStore(out).records()
    assert len(records) == 10 and {r.paper for r in records} == {"with"}
    assert all(r.paper_sha is None for r in records)
    code, _, err = cli("evaluate", "--model", "reference", *args)  # resumes: no text needed
    assert code == 0 and "nothing to do" in err

    registry = load_registry()
    model = LiteLLMModel(
        "openai/gpt-4o", registry.get("openai/gpt-4o"), mock_responses=["```python\npass\n```"]
    )
    litellm_out = tmp_path / "litellm"
    config = EvalConfig(models=["openai/gpt-4o"], out=litellm_out, tasks_dir=tasks, progress=False)
    with pytest.raises(PaperUnavailable) as info:
        evaluate(config, model_objects=[model])
    message = str(info.value)
    assert "\n" not in message and message.startswith("task toy:")
    assert "rcb paper fetch toy" in message and "--paper without" in message
    assert not ResultStore(litellm_out).records()
    # Through the command line: exit 2, the same line, nothing recorded.
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code, _, err = cli("evaluate", "--model", "openai/gpt-4o", *args[:2], "--out", litellm_out)
    errors = [line for line in err.splitlines() if line.startswith("rcb: error:")]
    assert code == 2 and len(errors) == 1 and "rcb paper fetch toy" in errors[0]
    assert not ResultStore(litellm_out).records()


def test_notes_are_a_condition_of_their_own(tmp_path, cli):
    out = tmp_path / "out"
    tasks = FIXTURE_TASKS
    code, _, err = cli(
        "evaluate", "--model", "reference", "--tasks-dir", tasks, "--tasks", "toy",
        "--paper", "notes", "--out", out, "--no-progress", "--workers", "1",
    )  # fmt: skip
    assert code == 0, err
    records = ResultStore(out).records()
    assert {r.paper for r in records} == {"notes"}
    notes = (FIXTURE_TASKS / "toy" / "notes.md").read_text()
    assert {r.paper_sha for r in records} == {hashlib.sha256(notes.encode()).hexdigest()}
    task = load_task(FIXTURE_TASKS / "toy")
    prompt = build_prompt(task, "scale", paper="notes")
    assert prompt.text.startswith("## Notes on the method (instead of the paper)")
    assert "maintainers' notes" in prompt.text and "The affine map" not in prompt.text
    code, _, _ = cli("report", out, "--json", tmp_path / "report.json", "--quiet")
    entry = json.loads((tmp_path / "report.json").read_text())["models"]["reference"]
    assert entry["scaled_pass_at_1"] is None and entry["notes"]["scaled_pass_at_1"] == 100.0
    cli("report", out, "--markdown", tmp_path / "report.md", "--quiet")
    markdown = (tmp_path / "report.md").read_text()
    assert "| reference | - | - | 100.0 |" in markdown  # apart, never the headline


def test_old_records_with_a_paper_flag_still_load():
    base = {
        "task": "t", "snippet": "s", "model": "m", "task_sha": "x", "prompt_sha": "y",
        "weight": 1, "published": "2025-01-01", "status": "pass",
    }  # fmt: skip
    assert Record.model_validate({**base, "paper": True}).paper == "with"
    assert Record.model_validate({**base, "paper": False}).paper == "without"
    assert Record.model_validate(base).paper == "with"
    assert Record.model_validate_json(json.dumps({**base, "paper": False})).key[4] == "without"


# --- what a task may declare --------------------------------------------------------------


def _with_paper(tmp_path: Path, line: str, extra: str = "") -> Path:
    tasks = pinned_task(tmp_path)
    yaml_path = tasks / "toy" / "task.yaml"
    text = yaml_path.read_text().replace("paper: {source: arxiv}", line)
    yaml_path.write_text(text.replace("arxiv_version: 2\n", extra))
    return tasks / "toy"


def test_vendored_papers_need_an_allowed_licence(tmp_path):
    root = _with_paper(tmp_path, "paper: {source: vendored, license: MIT}")
    with pytest.raises(TaskError, match=re.escape("CC-BY-4.0, CC-BY-SA-4.0, CC0-1.0")):
        load_task(root)
    root = _with_paper(tmp_path / "b", "paper: {source: vendored, license: CC-BY-4.0}")
    with pytest.raises(TaskError, match=re.escape("paper.tex")):
        load_task(root)  # the full text is missing
    (root / "paper.tex").write_text("\\documentclass{article}\nFull text. % a comment\n")
    task = load_task(root)
    assert "paper.tex" not in task.sandbox_files
    assert build_prompt(task, "scale").text.count("Full text.\n") == 1


def test_arxiv_papers_are_pinned_and_paper_md_is_gone(tmp_path):
    with pytest.raises(TaskError, match="arxiv_version"):
        load_task(_with_paper(tmp_path, "paper: {source: arxiv}"))
    with pytest.raises(TaskError, match=re.escape("'paper: {source: local}' is gone")):
        load_task(_with_paper(tmp_path / "b", "paper: {source: local}", "arxiv_version: 2\n"))
    root = pinned_task(tmp_path / "c")
    (root / "toy" / "paper.md").write_text("# an old paper.md\n")
    with pytest.raises(TaskError, match=re.escape("rename it notes.md")):
        load_task(root / "toy")


def test_validate_refuses_a_pdf_only_paper(fake, cache, tmp_path, cli):
    tasks = pinned_task(tmp_path, PDF_ONLY)
    code, out, err = cli("validate", tasks / "toy", "--sandbox", "local")
    assert code == 1
    assert "no LaTeX source" in out + err and "source: vendored" in out + err


def test_rcb_paper_fetch_and_show(fake, cache, tmp_path, cli):
    tasks = pinned_task(tmp_path)
    shutil.copytree(tasks / "toy", tasks / "other")
    other = tasks / "other" / "task.yaml"
    other.write_text(other.read_text().replace("id: toy", "id: other"))
    assert cli("paper", "fetch", "--check", "--tasks-dir", tasks)[0] == 1  # nothing cached yet
    assert fake.asked(TARBALL) == 0
    code, out, err = cli("paper", "fetch", "--tasks-dir", tasks)
    assert code == 0, err
    assert fake.asked(TARBALL) == 1  # two tasks, one paper, one request
    assert cli("paper", "fetch", "--check", "--tasks-dir", tasks)[0] == 0
    # The CI cache key: the pinned versions, so another version is another key.
    key = cli("paper", "key", "--tasks-dir", tasks)[1].strip()
    assert (
        key.startswith("rcb-papers-")
        and key == cli("paper", "key", "--tasks-dir", tasks)[1].strip()
    )
    other.write_text(other.read_text().replace("arxiv_version: 2", "arxiv_version: 1"))
    assert cli("paper", "key", "--tasks-dir", tasks)[1].strip() != key
    assert "fetched" in out and "cached" in out
    code, out, _ = cli("paper", "show", "toy", "--tasks-dir", tasks)
    assert code == 0 and out == TARBALL_TEXT
    code, out, _ = cli("paper", "show", "toy", "--notes", "--tasks-dir", tasks)
    assert code == 0 and "maintainers' notes" in out


def test_rcb_paper_fetch_fails_with_one_line_offline(cache, tmp_path, cli, no_network):
    tasks = pinned_task(tmp_path)
    code, _, err = cli("paper", "fetch", "toy", "--tasks-dir", tasks)
    assert code == 2
    assert "task toy: the paper (2401.00002v2) is not cached" in err
    with pytest.raises(RcbError):
        fetch_paper(load_task(tasks / "toy"))


# --- prompts a provider can cache ---------------------------------------------------------


def test_anthropic_gets_a_cache_breakpoint_and_the_savings_are_reported(tmp_path, cli, monkeypatch):
    from rcb_action.models._litellm import import_litellm

    litellm = import_litellm()
    sent: list[list[dict]] = []
    real = litellm.completion

    def spy(**kwargs):  # the real call, its messages kept
        sent.append(kwargs["messages"])
        return real(**kwargs)

    monkeypatch.setattr(litellm, "completion", spy)
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 10,
        "total_tokens": 1010,
        "prompt_tokens_details": {"cached_tokens": 800},
        "cache_read_input_tokens": 800,
    }
    answer = {
        "choices": [{"message": {"role": "assistant", "content": "```python\npass\n```\n"}}],
        "usage": usage,
    }
    name = "anthropic/claude-sonnet-4-5-20250929"  # in the installed price map, cache prices too
    claude = LiteLLMModel(name, None, backoff_s=0.01, mock_responses=[answer] * 5)
    gpt = LiteLLMModel("openai/gpt-4o", None, backoff_s=0.01, mock_responses=[answer] * 5)
    out = tmp_path / "out"
    config = EvalConfig(
        models=[name, "openai/gpt-4o"], out=out, tasks_dir=FIXTURE_TASKS, tasks="toy",
        workers=1, progress=False,
    )  # fmt: skip
    evaluate(config, model_objects=[claude, gpt])
    task = load_task(FIXTURE_TASKS / "toy")
    prompts = {build_prompt(task, n).text for n in task.snippet_names()}
    claude_sent = [m for m in sent if isinstance(m[0]["content"], list)]
    assert len(claude_sent) == 5 and len(sent) == 10  # gpt-4o: plain text, cached by OpenAI itself
    for messages in claude_sent:
        paper, rest = messages[0]["content"]
        assert paper["cache_control"] == {"type": "ephemeral"} and "cache_control" not in rest
        assert paper["text"].startswith("## The paper: ") and "## Your task" not in paper["text"]
        assert paper["text"] + rest["text"] in prompts  # the recorded bytes, split in two
    records = [r for r in ResultStore(out).records() if r.model == name]
    assert all(r.tokens_cached == 800 and r.cost_saved_usd > 0 for r in records)
    code, stdout, _ = cli("report", out)
    assert code == 0
    assert f"Prompt cache {name}: 4000 of 5000 input tokens" in stdout
    cli("report", out, "--markdown", tmp_path / "report.md", "--quiet")
    assert f"| {name} | 5000 | 4000 |" in (tmp_path / "report.md").read_text()
