"""``rcb validate`` rejects what a snippet's prompt gives away, and sizes the snippets.

Each test edits a private copy of the casetoy fixture; the checks read the prompt's
view of the code, so nothing here runs a sandbox except the one command-line test.
"""

from pathlib import Path

import pytest
import yaml
from conftest import FIXTURE_TASKS

from rcb_action.prompts import build_prompt
from rcb_action.tasks import load_task
from rcb_action.validate import Problem, SnippetSizes, TaskCheck, check_giveaways, snippet_sizes
from rcb_action.validate._giveaways import is_trivial, normalised, visible_lines

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _task(tasks: Path, source: str | None = None, *, authors: bool = True, **extra: object) -> Path:
    """casetoy with ``src/toy.py`` replaced by ``source`` (snippets then select no checks),
    built from the authors' code (``code_commit`` set) unless ``authors`` is false: a v1
    task's giveaways are warnings only."""
    root = tasks / "casetoy"
    if source is not None:
        (root / "src" / "toy.py").write_text(source)
        raw = yaml.safe_load((root / "task.yaml").read_text())
        raw["snippets"] = {}
        raw.pop("agent")
        raw.update(extra)
        (root / "task.yaml").write_text(yaml.safe_dump(raw, allow_unicode=True))
    if authors and "code_commit" not in (root / "task.yaml").read_text():
        _from_the_authors_code(root)
    return root


def _check(root: Path, *, sizes: bool = False) -> TaskCheck:
    """``check_giveaways`` on ``root``; the size rule's problems only with ``sizes`` (the
    small snippets these fixtures mark would trip it in every test)."""
    check = TaskCheck(root=root)
    check_giveaways(check, load_task(root))
    if not sizes:
        check.problems = [p for p in check.problems if not _is_size_problem(p)]
    return check


def _is_size_problem(problem: Problem) -> bool:
    return problem.message.startswith("snippets average") or "are one or two lines" in (
        problem.message
    )


def _messages(problems: list[Problem]) -> list[str]:
    return [str(p) for p in problems]


def test_the_fixtures_give_nothing_away_and_are_sized():
    for name in ("casetoy", "toy"):
        check = _check(FIXTURE_TASKS / name)
        assert check.problems == [] and check.warnings == [], name
    sizes = snippet_sizes(load_task(FIXTURE_TASKS / "casetoy"))
    # affine 2 (scale 1 and shift 1 nested in it), norm 4, slow sum 3.
    assert sizes == SnippetSizes(snippets=5, weighted=11, distinct=9, short=3)
    assert sizes.mean == 2.2 and sizes.short_share == 0.6
    assert (
        str(sizes) == "mean 2.2 weighted lines, 60% of 1-2 lines, 9 distinct of 11 weighted lines"
    )


def test_the_view_is_what_the_prompt_shows(fixture_tasks):
    task = load_task(_task(fixture_tasks))
    for name in task.snippet_names():
        prompt = build_prompt(task, name, paper="without").text
        lines = visible_lines(task, name)
        assert {line.path for line in lines} == {"src/toy.py", "src/helpers.py"}
        for line in lines:
            assert line.text in prompt
        placeholder = [line for line in lines if line.number is None]
        assert f'# TODO: Implement block "{name}"' in placeholder[0].text
        for line in lines:  # every other line is where the task's file has it
            if line.number is not None:
                source = (task.root / line.path).read_text().splitlines(keepends=True)
                assert source[line.number - 1] == line.text


NORM_TWICE = """\
import numpy as np
from helpers import square


def norm(x):
    # <paper2code name="norm">
    total = 0.0
    for value in x:
        total += square(value) * weight_of(value)
    return float(np.sqrt(total))
    # </paper2code name="norm">


def weighted_norm(x):
    total = 0.0
    for value in x:
        total += square(value) * weight_of(value)
    return float(np.sqrt(total))
"""


def test_a_masked_line_visible_elsewhere_in_the_file_is_an_error(fixture_tasks):
    root = _task(fixture_tasks, NORM_TWICE)
    check = _check(root)
    # The accumulation (22 characters, two names) is named with where it is visible; the
    # short `total = 0.0` and the loop header `for value in x:` are trivial, and the
    # square root line is long enough and visible too.
    assert _messages(check.problems) == [
        f"{root}/src/toy.py:9: snippet 'norm': masked line "
        "`total += square(value) * weight_of(value)` is visible verbatim at src/toy.py:17; "
        "a model can copy it (mask that line too, or choose another region)",
        f"{root}/src/toy.py:10: snippet 'norm': masked line `return float(np.sqrt(total))` "
        "is visible verbatim at src/toy.py:18; a model can copy it (mask that line too, or "
        "choose another region)",
    ]


@pytest.mark.parametrize(
    ("line", "trivial"),
    [
        ("prev_particles=prev_particles,", True),
        ("max_iterations=self.max_iterations,", True),
        ("'sigma_max': sigma_max,", True),
        ('"sigma_max": sigma_max}', True),
        ('raise ValueError("Model must be provided before running")', True),
        ("prev_particles=particles_of_the_last_round,", False),  # a choice, not wiring
        ("'sigma_max': sigma_max * scale_factor,", False),
        ("raise ValueError(f'bad {value}') from error_of_the_run", False),
        ("total += square(value) * weight_of(value)", False),
    ],
)
def test_values_passed_on_under_their_own_name_and_plain_raises_are_trivial(line, trivial):
    assert is_trivial(normalised(line)) is trivial


def test_a_line_in_a_context_file_counts_and_a_file_not_shown_does_not(fixture_tasks):
    root = _task(fixture_tasks)
    # norm's accumulation, copied into a file the prompt does not show: nothing.
    (root / "src" / "unshown.py").write_text("total += square(value)  # the norm\n" * 2)
    assert _check(root).problems == []
    # ... and into the context file, with other spacing and a comment: an error.
    helpers = root / "src" / "helpers.py"
    helpers.write_text(helpers.read_text() + "\n\ndef _demo(total, value):\n")
    helpers.write_text(helpers.read_text() + "    total  +=  square(value)   # same\n")
    (problem,) = _check(root).problems
    assert problem.path == f"{root}/src/toy.py" and problem.line == 25
    assert "snippet 'norm': masked line `total += square(value)`" in problem.message
    assert "visible verbatim at src/helpers.py:6" in problem.message


def test_nested_snippets_see_each_other(fixture_tasks):
    # Masking the outer snippet hides the inner one; masking the inner shows the outer's
    # other lines. A line shared by two sibling snippets is visible to each.
    source = """\
def update(m, v, g, beta1, beta2):
    # <paper2code name="moments">
    # <paper2code name="first moment">
    m = beta1 * m + (1.0 - beta1) * g
    # </paper2code name="first moment">
    # <paper2code name="second moment">
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    # </paper2code name="second moment">
    # </paper2code name="moments">
    return m, v
"""
    root = _task(fixture_tasks, source)
    found = {(p.line, p.message.split("'")[1]) for p in _check(root).problems}
    assert found == {(4, "first moment"), (7, "second moment")}


CLASS_SOURCE = '''\
class Momentum:
    def __init__(self, beta):
        self.beta = beta
        self.m = 0.0

    def step(self, g):
        """One step of the momentum average."""
        # The running average: m = beta * m + (1 - beta) * g.
        # <paper2code name="momentum">
        self.m = self.beta * self.m + (1 - self.beta) * g
        return self.m
        # </paper2code name="momentum">


def norm(x):
    """Euclidean norm, ``float(np.sqrt(np.sum(x * x)))``."""
    # <paper2code name="norm">
    return float(np.sqrt(np.sum(x * x)))
    # </paper2code name="norm">


def scaled(x, a):
    """Scale x by a: y = a x (a formula a model could read, but not the code)."""
    # <paper2code name="scaled">
    y = np.multiply(a, x) + 0.0 * x.sum()
    # </paper2code name="scaled">
    return y


def solve(problem, solver, x_pde, bcs):
    """Newton's method; problem must implement ``step(solver, x_pde, bcs)``."""
    # <paper2code name="solve">
    J, neg_R = problem.step(solver, x_pde, bcs)
    # </paper2code name="solve">
    return J, neg_R
'''


def test_a_docstring_or_comment_that_restates_the_code_is_an_error(fixture_tasks):
    root = _task(fixture_tasks, CLASS_SOURCE)
    check = _check(root)
    assert _messages(check.problems) == [
        f"{root}/src/toy.py:10: snippet 'momentum': masked line "
        "`self.m = self.beta * self.m + (1 - self.beta) * g` is restated by the comments "
        "above it (src/toy.py:8), which the prompt shows; reword that text, or mask it with "
        "the code",
        f"{root}/src/toy.py:18: snippet 'norm': masked line "
        "`return float(np.sqrt(np.sum(x * x)))` is restated by the docstring of 'norm' "
        "(src/toy.py:16), which the prompt shows; reword that text, or mask it with the code",
    ]
    # A call documented with its arguments ('solve') is an interface: no error.
    # The formula in words is for a person to judge: a warning, not an error.
    assert any("the docstring of 'scaled'" in w.message for w in check.warnings)


def test_a_docstring_masked_with_the_code_gives_nothing_away(fixture_tasks):
    source = '''\
def norm(x):
    # <paper2code name="norm">
    """Euclidean norm, ``float(np.sqrt(np.sum(x * x)))``, with x = a b + c d."""
    return float(np.sqrt(np.sum(x * x)))
    # </paper2code name="norm">
'''
    check = _check(_task(fixture_tasks, source))
    assert check.problems == [] and check.warnings == []


DOCSTRINGS = '''\
def short(x):
    """Sum of the entries.

    Args:
        x: an array; any shape, any dtype that numpy can add,
            as long as the sum fits.
        y: unused, kept for the interface.

    Returns:
        A float.
    """
    # <paper2code name="short docstring">
    total = sum(float(v) for v in x)
    # </paper2code name="short docstring">
    return total


def long(x):
    """Sum of the entries.

    The entries are added in order, one at a time,
    with no compensation of rounding errors,
    which is enough for the arrays used here.
    """
    # <paper2code name="long docstring">
    total = sum(float(w) for w in x)
    # </paper2code name="long docstring">
    return total


def formula(x, a, b):
    """The affine map y_i ≥ a x_i + b of every entry."""
    # <paper2code name="formula docstring">
    y = [a * v + b for v in x]
    # </paper2code name="formula docstring">
    return y


def commented(x):
    # The mean: m = sum(x) / n over the n entries.
    # <paper2code name="formula comment">
    m = sum(x) / len(x)
    # </paper2code name="formula comment">
    return m
'''


def test_long_or_formula_like_text_beside_a_snippet_is_a_warning_for_review(fixture_tasks):
    root = _task(fixture_tasks, DOCSTRINGS)
    check = _check(root)
    assert check.problems == []
    warnings = {(w.line, w.message) for w in check.warnings}
    assert warnings == {
        (
            19,
            "the docstring of 'long' above snippet(s) 'long docstring' has 4 lines of prose: "
            "review that it does not give the masked code away",
        ),
        (
            32,
            "the docstring of 'formula' above snippet(s) 'formula docstring' has a "
            "formula-like line (`The affine map y_i ≥ a x_i + b of every entry.`): review "
            "that it does not give the masked code away",
        ),
        (
            40,
            "the comment block above snippet(s) 'formula comment' has a formula-like line "
            "(`The mean: m = sum(x) / n over the n entries.`): review that it does not give "
            "the masked code away",
        ),
    }
    assert all(w.path == f"{root}/src/toy.py" for w in check.warnings)


def _sized(lines_per_snippet: list[int]) -> str:
    parts = []
    for i, size in enumerate(lines_per_snippet):
        body = "".join(f"    v{i}_{j} = x[{j}] * {i + 1}.{j}\n" for j in range(size))
        parts.append(
            f'def f{i}(x):\n    # <paper2code name="s{i}">\n{body}'
            f'    # </paper2code name="s{i}">\n    return x\n'
        )
    return "\n\n".join(parts)


def _from_the_authors_code(root: Path) -> None:
    text = (root / "task.yaml").read_text()
    origin = f"code_url: https://github.com/example/toy\ncode_commit: {COMMIT}\ncode_license: MIT\n"
    (root / "task.yaml").write_text(text + origin)
    (root / "LICENSE").write_text("MIT License\n")


def test_a_task_from_the_authors_code_needs_snippets_of_real_size(fixture_tasks):
    # rcb's own code: the figures are reported, nothing is required.
    root = _task(fixture_tasks, _sized([1, 2, 7, 8]), authors=False)
    check = _check(root)
    assert check.problems == []
    assert check.extra["sizes"] == SnippetSizes(snippets=4, weighted=18, distinct=18, short=2)
    # The same snippets in a task built from the authors' code: too small, too many short.
    _from_the_authors_code(root)
    assert _messages(_check(root, sizes=True).problems) == [
        f"{root}/task.yaml: snippets average 4.5 weighted lines; a task built from the "
        "authors' code needs at least 6 (mark larger regions, or nest small snippets in one "
        "around them)",
        f"{root}/task.yaml: 2 of 4 snippets (50%) are one or two lines ('s0', 's1'); at most "
        "25% may be",
    ]


def test_sizes_at_the_limits_pass(fixture_tasks):
    # A mean of exactly 6 and exactly one short snippet in four.
    root = _task(fixture_tasks, _sized([2, 6, 8, 8]))
    check = _check(root, sizes=True)
    assert check.problems == []
    assert check.extra["sizes"].mean == 6.0 and check.extra["sizes"].short_share == 0.25


def test_nested_lines_count_once_in_distinct_lines(fixture_tasks):
    source = """\
def f(x, y):
    # <paper2code name="outer">
    a = x + 1
    # <paper2code name="inner">
    b = y + 2

    c = a * b  # a comment does not weigh
    # </paper2code name="inner">
    # </paper2code name="outer">
    return c
"""
    sizes = snippet_sizes(load_task(_task(fixture_tasks, source, authors=False)))
    assert sizes == SnippetSizes(snippets=2, weighted=5, distinct=3, short=1)


def test_validate_reports_giveaways_and_sizes(cli, fixture_tasks):
    root = fixture_tasks / "casetoy"
    code, out, err = cli("validate", root, "--seeds", "1")  # seeds: tested elsewhere
    assert code == 0, out + err
    sizes = "mean 2.2 weighted lines, 60% of 1-2 lines, 9 distinct of 11 weighted lines"
    assert sizes in next(line for line in err.splitlines() if line.startswith("ok    casetoy"))
    toy = root / "src" / "toy.py"
    toy.write_text(toy.read_text() + "\n\ndef norm_copy(x, total):\n")
    toy.write_text(toy.read_text() + "    return float(np.sqrt(total))\n")
    code, out, err = cli("validate", root, "--seeds", "1")  # seeds: tested elsewhere
    assert code == 0  # a v1 task: flagged for review only
    copied = "snippet 'norm': masked line `return float(np.sqrt(total))` is visible verbatim"
    assert copied in err and "a v1 task" in err
    _from_the_authors_code(root)
    code, out, err = cli("validate", root, "--seeds", "1")  # seeds: tested elsewhere
    assert code == 1
    assert (
        f"{root}/src/toy.py:26: snippet 'norm': masked line `return float(np.sqrt(total))` "
        "is visible verbatim at src/toy.py:41" in out
    )
    assert f"FAIL  casetoy: 3 problem(s) ({sizes})" in err  # the copy and the two size rules


def test_a_v1_task_s_giveaways_are_warnings(fixture_tasks):
    """rcb's own re-implementations (no ``code_commit``) are flagged for review only, so a
    change to one of them can still be validated until v2 retires it."""
    root = _task(fixture_tasks, NORM_TWICE, authors=False)
    check = _check(root)
    assert check.problems == []
    assert any("appears verbatim" in str(w) or "visible" in str(w) for w in check.warnings)
    assert any("a v1 task: fix it or retire the task" in str(w) for w in check.warnings)
