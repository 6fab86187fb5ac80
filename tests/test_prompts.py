from rcb_action.prompts import build_prompt, masked_file
from rcb_action.splice import extract_code, reindent, splice
from rcb_action.tasks import load_task


def test_masking_removes_nested_snippets_and_all_tags(fixture_tasks):
    task = load_task(fixture_tasks / "toy")
    lines, at = masked_file(task, "affine")
    text = "".join(lines)
    assert lines[at] == '    # TODO: Implement block "affine"\n'
    assert lines[at + 1] == "    # Approximately 2 lines of code.\n"
    assert (
        "y = a * x" not in text and "y = y + b" not in text
    )  # nested snippets vanish with the parent
    assert "paper2code" not in text
    assert "total += square(value)" in text  # other snippets stay, tags stripped


def test_prompt_contents(fixture_tasks):
    task = load_task(fixture_tasks / "toy")
    prompt = build_prompt(task, "scale")
    assert "The affine map is y = a·x + b" in prompt.text
    assert "### src/helpers.py" in prompt.text  # context file in full
    assert '# TODO: Implement block "scale"' in prompt.text
    assert "# Approximately 1 line of code." in prompt.text
    assert "y = y + b" in prompt.text  # the sibling snippet is shown
    assert (
        "test_scale" not in prompt.text and "assert affine" not in prompt.text
    )  # tests never shown
    assert "paper2code" not in prompt.text


def test_prompt_is_deterministic_and_paper_switch(fixture_tasks):
    task = load_task(fixture_tasks / "toy")
    a, b = build_prompt(task, "norm"), build_prompt(task, "norm")
    assert a.text == b.text and a.sha == b.sha
    without = build_prompt(task, "norm", paper=False)
    assert "The affine map" not in without.text and without.sha != a.sha
    assert not without.paper_truncated


def test_small_context_window_cuts_the_paper(fixture_tasks):
    task = load_task(fixture_tasks / "toy")
    paper = task.paper_path()
    paper.write_text(
        "# Long paper\n\n" + "\n\n".join(f"Paragraph {i}: " + "word " * 200 for i in range(40))
    )
    full = build_prompt(task, "norm")
    window = len(full.text) // 3 // 2  # half the prompt's size in tokens at 3 chars a token
    cut = build_prompt(task, "norm", context_window=window)
    assert cut.paper_truncated
    assert 0 < cut.paper_chars_kept < cut.paper_chars
    assert "[rcb: the paper was cut to" in cut.text
    assert len(cut.text) <= (window - window // 4) * 3
    assert '# TODO: Implement block "norm"' in cut.text  # the code is never cut
    tiny = build_prompt(task, "norm", context_window=50)  # nothing fits: paper dropped, no crash
    assert tiny.paper_chars_kept == 0


def test_extract_last_python_block():
    answer = "First:\n```python\na = 1\n```\nthen\n```py\nb = 2\n```\n```text\nnot code\n```\n"
    assert extract_code(answer) == "b = 2\n"
    assert extract_code("```\nc = 3\n```") == "c = 3\n"
    assert extract_code("no code at all") is None
    assert extract_code("```python\n   \n```") is None


def test_reindent_to_placeholder():
    assert reindent("    x = 1\n    if x:\n        y = 2\n", "  ") == [
        "  x = 1\n",
        "  if x:\n",
        "      y = 2\n",
    ]


def test_splice_reference_reproduces_the_stripped_file(fixture_tasks):
    task = load_task(fixture_tasks / "toy")
    for name in task.snippet_names():
        original = "".join(task.files[task.snippets[name].path].stripped())
        assert splice(task, name, "".join(task.reference_body(name))) == original


def test_paper_from_arxiv_is_fetched_once_cached_and_falls_back(
    fixture_tasks, tmp_path, monkeypatch
):
    """``paper: {source: arxiv}``: arXiv's HTML full text (the network is a test double here),
    cached; offline it comes from the cache, else from paper.md, else one clear line."""
    import io
    import urllib.request

    import pytest

    from rcb_action.errors import TaskError
    from rcb_action.prompts import paper_text
    from rcb_action.tasks import load_task

    monkeypatch.setenv("RCB_CACHE_DIR", str(tmp_path / "cache"))
    task_dir = fixture_tasks / "toy"
    yaml_path = task_dir / "task.yaml"
    yaml_path.write_text(yaml_path.read_text() + "paper: {source: arxiv}\n")
    task = load_task(task_dir)
    assert task.config.paper.source == "arxiv"
    asked: list[str] = []

    def online(url, timeout):
        asked.append(url)
        page = (
            "<html><style>p{}</style><body><h1>Toy &amp; Scale</h1>\n\n<p>y = a x</p></body></html>"
        )
        return io.BytesIO(page.encode())

    monkeypatch.setattr(urllib.request, "urlopen", online)
    text = paper_text(task)
    assert asked == ["https://arxiv.org/html/0000.00000"]
    assert "Toy & Scale" in text and "y = a x" in text and "<" not in text and "p{}" not in text
    assert paper_text(task) == text and len(asked) == 1  # the second time from the cache

    def offline(url, timeout):
        raise OSError("no network")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    assert paper_text(task) == text  # still cached
    for cached in (tmp_path / "cache" / "papers").iterdir():
        cached.unlink()
    assert paper_text(task) == (task_dir / "paper.md").read_text()  # offline: paper.md
    (task_dir / "paper.md").unlink()
    with pytest.raises(TaskError) as info:
        paper_text(load_task(task_dir))
    assert "key 'paper': could not fetch arXiv 0000.00000" in str(info.value)
    assert "\n" not in str(info.value)
