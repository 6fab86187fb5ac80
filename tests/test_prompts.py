from conftest import TASKS

from rcb_action.models import fenced
from rcb_action.prompts import build_prompt, masked_file
from rcb_action.scoring import task_files
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
    # The paper comes first, the same bytes for every snippet (a provider can cache it).
    assert a.text.startswith("## The paper: ") and a.prefix_chars > 0
    other = build_prompt(task, "scale")
    assert other.text[: other.prefix_chars] == a.text[: a.prefix_chars]
    assert a.paper_sha == other.paper_sha and without.paper_sha is None


def test_small_context_window_cuts_the_paper(fixture_tasks):
    task = load_task(fixture_tasks / "toy")
    paper = task.root / "paper.tex"  # the fixture's vendored full text
    paper.write_text(
        "\\section{Long paper}\n\n"
        + "\n\n".join(f"Paragraph {i}: " + "word " * 200 for i in range(40))
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


def test_reindent_keeps_blank_lines_and_the_whitespace_past_the_margin():
    code = "\n    x = 1\n        \n  \n    y = 2\n\n"
    assert reindent(code, "\t") == ["\n", "\tx = 1\n", "\t    \n", "\n", "\ty = 2\n", "\n"]


def test_every_reference_answer_splices_back_byte_for_byte():
    """The reference's answer, fenced and extracted as a model's is, gives back the task's
    own file: so it takes the reference run's verdict and never runs again."""
    differ = []
    for folder in sorted(p for p in TASKS.iterdir() if (p / "task.yaml").is_file()):
        task = load_task(folder)
        for name, snippet in task.snippets.items():
            code = extract_code(fenced("".join(task.reference_body(name))))
            assert code is not None
            spliced = task_files(
                task, {snippet.path: splice(task, name, code)}, only=[snippet.path]
            )
            if spliced != task_files(task, only=[snippet.path]):
                differ.append(f"{task.id}: {name}")
    assert differ == []


def test_splice_reference_reproduces_the_stripped_file(fixture_tasks):
    task = load_task(fixture_tasks / "toy")
    for name in task.snippet_names():
        original = "".join(task.files[task.snippets[name].path].stripped())
        assert splice(task, name, "".join(task.reference_body(name))) == original
