"""What a snippet's prompt gives away, and how big the snippets are (``rcb validate``).

Every check reads exactly what a model sees when one snippet is masked: the target
file as :func:`rcb_action.prompts.masked_file` masks it, and the files
:func:`rcb_action.prompts.build_prompt` shows in full (``context:`` and the other
annotated files, tags stripped). The paper is not searched: it is the paper.

1. **Visible copies** (error). A masked code line that appears verbatim elsewhere in
   what the model sees. Lines are compared with leading and trailing whitespace
   stripped, inner runs of whitespace collapsed and a trailing comment dropped.
   Trivial lines are ignored, as a model writes them anyway:

   - shorter than ``MIN_LINE_CHARS`` (20) characters once normalised (``return x``,
     ``else:``, ``x = self.norm(x)``);
   - naming nothing but Python keywords, ``self`` and ``cls``;
   - an import;
   - a compound statement's header with no arithmetic (``for i in range(n_steps):``,
     ``if self.L[i] is not None:``; ``for j in range(i + 1, n):`` is not trivial);
   - a name converted in place (``t = np.asarray(t, dtype=float)``,
     ``x = x.detach().cpu()``): rebound to a dtype, device or container conversion of
     itself (``_CONVERSIONS``);
   - a value passed on under its own name, one per line in a call or a dict
     (``prev_weights=prev_weights,``, ``'sigma_max': sigma_max,``,
     ``max_iterations=self.max_iterations,``): wiring that the signatures in view dictate;
   - raising an exception with a literal message only (``raise ValueError("...")``):
     argument checks the paper does not describe.
2. **Text that restates the code.** What a model reads beside the placeholder: the
   docstring of the function enclosing the snippet (when the snippet does not mask
   it), the comments in that function above the snippet, and the block of comment
   lines directly above the snippet.

   - error: a masked code line whose expression (what follows ``=``, ``+=``,
     ``return`` and the like; else the whole line) has at least ``MIN_EXPRESSION_TOKENS``
     (5) tokens, two of them names or numbers, computes something (an arithmetic,
     comparison or boolean operator: a call documented with its arguments is an
     interface, not a restatement), and at least ``RESTATED_SHARE`` (80%) of its tokens
     appear as one run in that text. Tokens are names, numbers and operators;
     whitespace is ignored and ``self.`` dropped, so ``m = beta * m + g`` in a comment
     restates ``self.m = self.beta * self.m + g``.
   - warning, for review: that docstring has more than ``MAX_PROSE_LINES`` (3) lines
     of prose (lines in Args:/Returns:-style sections do not count) or a formula-like
     line; the same for the comment block directly above. Formula-like: an equation
     (``a = b``, spaces around ``=``), a mathematical symbol (≥, Σ, √, −, ·, ...),
     LaTeX (``\\frac``, ``$...$``), or two arithmetic or comparison operators between
     operands.
3. **Sizes.** Mean weighted lines per snippet, the share of one- or two-line snippets,
   and the distinct masked lines (each counted once, however deeply nested) beside
   the nested-counted total. A task built from the authors' code (``code_commit``
   set) needs a mean of at least ``MIN_MEAN_LINES`` (6) and at most
   ``MAX_SHORT_SHARE`` (25%) of one- or two-line snippets, as ResearchCodeBench's are.
"""

from __future__ import annotations

import ast
import contextlib
import io
import keyword
import math
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass, field

from rcb_action.prompts import build_prompt, masked_file
from rcb_action.tasks import AnnotatedFile, Snippet, Task, code_lines
from rcb_action.validate._validate import Problem, TaskCheck

MIN_LINE_CHARS = 20
MIN_EXPRESSION_TOKENS = 5
RESTATED_SHARE = 0.8
MAX_PROSE_LINES = 3
MIN_MEAN_LINES = 6.0
MAX_SHORT_SHARE = 0.25
SHORT_LINES = 2  # a snippet of at most this many weighted lines is "short"

_SPACES = re.compile(r"\s+")
_NAME = re.compile(r"[^\W\d]\w*")
_PLAIN_NAMES = frozenset(keyword.kwlist) | {"self", "cls"}
_IMPORT = re.compile(r"^(?:import|from)\s+[\w.]+(?:\s|$)")
_HEADER = re.compile(
    r"^(?:async\s+)?(?:for|while|if|elif|else|try|except|finally|with|def|class)\b.*:$"
)
# An operator that computes (a unary minus in a literal such as -1 aside).
_ARITHMETIC = re.compile(r"\*\*|//|[+*/%@&|^~]|[<>!=]=|[<>]|(?<=[\w)\]])\s*-")
_CONVERSIONS = (
    "asarray|asanyarray|array|ascontiguousarray|atleast_[123]d|as_tensor|tensor|from_numpy|"
    "astype|to|float|double|half|bfloat16|int|long|bool|contiguous|detach|clone|copy|cpu|"
    "cuda|numpy|tolist|list|tuple"
)
_CONVERTED = re.compile(
    rf"^(?P<name>[^\W\d]\w*) = (?:"
    rf"(?:[^\W\d]\w*\.)*(?:{_CONVERSIONS})\((?P<same>[^\W\d]\w*)(?:, [^()]*)?\)"
    rf"|(?P<self>[^\W\d]\w*)(?:\.(?:{_CONVERSIONS})\([^()]*\))+"
    rf")$"
)
_PASSED_ON = re.compile(
    r"""^(?:(?P<kw>[^\W\d]\w*)=|(?P<q>['"])(?P<key>[^\W\d]\w*)(?P=q): ?)"""
    r"(?:self\.)?(?P<value>[^\W\d]\w*)[,)}]?$"
)
_RAISE_LITERAL = re.compile(r"""^raise (?:[^\W\d]\w*\.)*[^\W\d]\w*\((?:"[^"\\]*"|'[^'\\]*')\)$""")
# Names, numbers, operators, and any other visible character as a token of its own
# (so that a symbol no code has, such as ≥, breaks a run of tokens).
_TOKEN = re.compile(
    r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?j?"
    r"|[^\W\d]\w*"
    r"|\*\*=?|//=?|>>=?|<<=?|->|:=|[-+*/%@&|^<>!=]=|[-+*/%@&|^~<>=.,:;()\[\]{}]"
    r"|\S"
)
_ASSIGNMENTS = frozenset(
    {"=", "+=", "-=", "*=", "/=", "//=", "%=", "**=", "@=", "&=", "|=", "^=", ">>=", "<<=", ":="}
)
_LEADING_KEYWORDS = frozenset({"return", "yield", "assert", "raise", "await", "del"})
_OPENERS, _CLOSERS = frozenset("([{"), frozenset(")]}")
_COMPUTING = frozenset({
    "+", "-", "*", "/", "//", "%", "**", "@", "<", ">", "<=", ">=", "==", "!=",
    "&", "|", "^", "~", "<<", ">>", "and", "or", "not",
})  # fmt: skip

_SECTION = re.compile(
    r"^(args|arguments|parameters|params|returns?|yields?|raises|attributes|examples?|"
    r"shapes?|inputs?|outputs?|keyword args|kwargs|other parameters|see also|references|"
    r"warns|todo)\s*:?\s*$",
    re.IGNORECASE,
)
_URL = re.compile(r"\S+://\S+")
_MATH = re.compile(
    r"[≥≤≠≈∝·×÷∑Σ∏√∫∂∇⊙⊗⊕−‖∈∞]"
    r"|\\(?:frac|sum|prod|sqrt|cdot|times|mathbf|mathrm|log|exp|left|right)\b"
    r"|\$[^$\s][^$]*\$"
)
_EQUATION = re.compile(r"[\w)\]]\s+=\s+[\w(\[-]")
_OPERATOR = re.compile(
    r"(?<=[\w)\]])\s*(?:\*\*|[*+^])\s*(?=[\w(\[])"  # a*b, a + b, a^b
    r"|(?<=[\w)\]])\s+(?:[-/]|[<>]=?|==|!=)\s+(?=[\w(\[])"  # a - b, a / b, a >= b (spaced)
    r"|(?<=\b\w)/(?=\w\b)"  # 1/4, t/T
)


@dataclass(frozen=True)
class SnippetSizes:
    """How big a task's snippets are.

    Attributes:
        snippets: how many snippets.
        weighted: weighted lines, nested snippets counted in each enclosing one (the
            weights of the scaled pass@1).
        distinct: masked code lines counted once each, however deeply nested.
        short: snippets of one or two weighted lines.
    """

    snippets: int
    weighted: int
    distinct: int
    short: int

    @property
    def mean(self) -> float:
        return self.weighted / self.snippets if self.snippets else 0.0

    @property
    def short_share(self) -> float:
        return self.short / self.snippets if self.snippets else 0.0

    def __str__(self) -> str:
        return (
            f"mean {self.mean:.1f} weighted lines, {100 * self.short_share:.0f}% of 1-2 lines, "
            f"{self.distinct} distinct of {self.weighted} weighted lines"
        )


def snippet_sizes(task: Task) -> SnippetSizes:
    """The size figures of ``task``'s snippets (all zero for a task without snippets)."""
    weights = [task.weight(name) for name in task.snippet_names()]
    distinct = 0
    for annotated in task.files.values():
        masked: set[int] = set()
        for snippet in annotated.snippets:
            masked.update(_code_indices(annotated, snippet))
        distinct += len(masked)
    return SnippetSizes(
        snippets=len(weights),
        weighted=sum(weights),
        distinct=distinct,
        short=sum(1 for w in weights if w <= SHORT_LINES),
    )


def check_giveaways(check: TaskCheck, task: Task) -> None:
    """Add to ``check`` what the prompts of ``task`` give away and what its sizes miss.

    Errors go to ``check.problems`` (warnings for a v1 task, one not built from the
    authors' code), review warnings to ``check.warnings``; the size figures go to
    ``check.extra["sizes"]``. Never raises for the task's fault.
    """
    if not task.snippets:
        return
    sizes = snippet_sizes(task)
    check.extra["sizes"] = sizes
    check.problems += _size_problems(task, sizes)
    sources = {rel: _Source.read(annotated) for rel, annotated in task.files.items()}
    found: list[Problem] = []
    for name in task.snippet_names():
        found += _visible_copies(task, name)
        found += _restatements(task, name, sources[task.snippets[name].path])
    if task.config.code_commit is None:
        # rcb's own re-implementations (benchmark v1), kept until v2 replaces them:
        # flagged for review, not refused, so a change to them can still be validated.
        check.warnings += [
            Problem(p.path, p.line, f"{p.message} (a v1 task: fix it or retire the task)")
            for p in found
        ]
    else:
        check.problems += found
    check.warnings += _review_warnings(task, sources)


def _size_problems(task: Task, sizes: SnippetSizes) -> list[Problem]:
    """A task built from the authors' code sizes its snippets like ResearchCodeBench's."""
    if task.config.code_commit is None:
        return []
    where = str(task.root / "task.yaml")
    problems = []
    if sizes.mean < MIN_MEAN_LINES:
        problems.append(
            Problem(
                where,
                None,
                f"snippets average {sizes.mean:.1f} weighted lines; a task built from the "
                f"authors' code needs at least {MIN_MEAN_LINES:.0f} (mark larger regions, "
                "or nest small snippets in one around them)",
            )
        )
    if sizes.short_share > MAX_SHORT_SHARE:
        short = [n for n in task.snippet_names() if task.weight(n) <= SHORT_LINES]
        shown = ", ".join(f"'{n}'" for n in short[:5]) + (", ..." if len(short) > 5 else "")
        problems.append(
            Problem(
                where,
                None,
                f"{sizes.short} of {sizes.snippets} snippets ({100 * sizes.short_share:.0f}%) "
                f"are one or two lines ({shown}); at most {100 * MAX_SHORT_SHARE:.0f}% may be",
            )
        )
    return problems


# --- what the model sees ---------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    """A line the prompt shows: its file, its 1-based line in the task's copy (None for
    the placeholder) and its text."""

    path: str
    number: int | None
    text: str


def _tag_indices(annotated: AnnotatedFile) -> set[int]:
    return {i for s in annotated.snippets for i in (s.start, s.end)}


def _code_indices(annotated: AnnotatedFile, snippet: Snippet) -> list[int]:
    """0-based indices of the snippet's weighted lines (nested snippets included)."""
    return [
        i
        for i in range(snippet.start + 1, snippet.end)
        if code_lines([annotated.lines[i]]) == 1 and i not in annotated.docstrings
    ]


def visible_lines(task: Task, name: str) -> list[_Line]:
    """Every line the prompt for snippet ``name`` shows, located in the task's files.

    Raises:
        RuntimeError: the prompt shows something else (a bug: this view and
            :mod:`rcb_action.prompts` disagree).
    """
    snippet = task.snippets[name]
    target = task.files[snippet.path]
    tags = _tag_indices(target)
    masked, at = masked_file(task, name)
    kept = [
        i
        for i in range(len(target.lines))
        if i not in tags and not snippet.start <= i <= snippet.end
    ]
    numbers: list[int | None] = [i + 1 for i in kept if i < snippet.start]
    numbers += [None, None] + [i + 1 for i in kept if i > snippet.end]
    if len(numbers) != len(masked) or numbers[at : at + 2] != [None, None]:
        raise RuntimeError(f"{task.id} / {name}: the masked file is not the view validate reads")
    lines = [_Line(snippet.path, n, text) for n, text in zip(numbers, masked, strict=True)]
    prompt = build_prompt(task, name, paper="without").text
    for rel in dict.fromkeys([*task.config.context, *task.config.annotated]):
        if rel == snippet.path or f"### {rel}\n```python\n" not in prompt:
            continue
        if rel in task.files:
            other = task.files[rel]
            other_tags = _tag_indices(other)
            shown = [(i + 1, t) for i, t in enumerate(other.lines) if i not in other_tags]
        else:
            text = (task.root / rel).read_text(encoding="utf-8")
            shown = list(enumerate(text.splitlines(keepends=True), 1))
        if "".join(t for _, t in shown) not in prompt:
            raise RuntimeError(f"{task.id} / {name}: {rel} is not shown as validate reads it")
        lines += [_Line(rel, n, t) for n, t in shown]
    return lines


# --- 1. masked lines visible elsewhere ---------------------------------------------


def _drop_comment(line: str) -> str:
    """The line without a trailing ``#`` comment (a ``#`` inside a string stays)."""
    quote = ""
    i = 0
    while i < len(line):
        char = line[i]
        if quote:
            if char == "\\":
                i += 2
                continue
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "#":
            return line[:i]
        i += 1
    return line


def normalised(line: str) -> str:
    """A code line as the verbatim check compares it."""
    return _SPACES.sub(" ", _drop_comment(line)).strip()


def is_trivial(text: str) -> bool:
    """A normalised line too plain to give anything away (see the module docstring)."""
    if len(text) < MIN_LINE_CHARS or _IMPORT.match(text):
        return True
    if all(name in _PLAIN_NAMES for name in _NAME.findall(text)):
        return True
    if _HEADER.match(text) and not _ARITHMETIC.search(text):
        return True
    if _RAISE_LITERAL.match(text):
        return True
    passed = _PASSED_ON.match(text)
    if passed is not None:
        return passed["value"] in (passed["kw"], passed["key"])
    converted = _CONVERTED.match(text)
    if converted is None:
        return False
    return converted["name"] in (converted["same"], converted["self"])


def _masked_code(task: Task, name: str) -> list[tuple[int, str]]:
    """(1-based line, normalised text) of each masked code line, each text once."""
    snippet = task.snippets[name]
    annotated = task.files[snippet.path]
    seen: dict[str, int] = {}
    for i in _code_indices(annotated, snippet):
        seen.setdefault(normalised(annotated.lines[i]), i + 1)
    return [(n, text) for text, n in seen.items()]


def _visible_copies(task: Task, name: str) -> list[Problem]:
    snippet = task.snippets[name]
    where: dict[str, list[_Line]] = {}
    for line in visible_lines(task, name):
        if line.number is not None:
            where.setdefault(normalised(line.text), []).append(line)
    problems = []
    for number, text in _masked_code(task, name):
        if is_trivial(text) or text not in where:
            continue
        first, *more = where[text]
        also = f" and {len(more)} more place(s)" if more else ""
        problems.append(
            Problem(
                str(task.root / snippet.path),
                number,
                f"snippet '{name}': masked line `{_short(text)}` is visible verbatim at "
                f"{first.path}:{first.number}{also}; a model can copy it (mask that line too, "
                "or choose another region)",
            )
        )
    return problems


def _short(text: str, limit: int = 70) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- 2. docstrings and comments that restate the code ------------------------------


@dataclass(frozen=True)
class _Function:
    name: str
    first: int  # 1-based def line
    last: int
    docstring: str | None
    doc_first: int  # 1-based first line of the docstring (0 when there is none)


@dataclass
class _Source:
    """An annotated file's functions and comments, read once."""

    annotated: AnnotatedFile
    functions: list[_Function] = field(default_factory=list)
    comments: dict[int, str] = field(default_factory=dict)  # 1-based line -> text after '#'

    @classmethod
    def read(cls, annotated: AnnotatedFile) -> _Source:
        source = cls(annotated)
        text = "".join(annotated.lines)
        tags = {i + 1 for i in _tag_indices(annotated)}
        try:  # the task's own reference file, never a model's answer
            tree = ast.parse(text)
        except (SyntaxError, ValueError):  # not Python: the comment block above still counts
            tree = None
        if tree is not None:
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    source.functions.append(_function(node))
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.COMMENT and token.start[0] not in tags:
                    source.comments[token.start[0]] = token.string.lstrip("#").strip()
        except (tokenize.TokenError, SyntaxError):
            for number, line in enumerate(annotated.lines, 1):
                if line.lstrip().startswith("#") and number not in tags:
                    source.comments[number] = line.strip().lstrip("#").strip()
        return source

    def enclosing(self, snippet: Snippet) -> _Function | None:
        """The innermost function whose body holds the snippet's start tag."""
        tag = snippet.start + 1
        inside = [f for f in self.functions if f.first < tag <= f.last]
        return max(inside, key=lambda f: f.first, default=None)

    def block_above(self, snippet: Snippet) -> list[int]:
        """1-based lines of the comment lines directly above the snippet (tags skipped)."""
        tags = _tag_indices(self.annotated)
        block: list[int] = []
        i = snippet.start - 1
        while i >= 0:
            if i in tags:
                i -= 1
                continue
            if not self.annotated.lines[i].lstrip().startswith("#"):
                break
            block.append(i + 1)
            i -= 1
        return sorted(block)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> _Function:
    docstring = ast.get_docstring(node, clean=True)
    first_stmt = node.body[0]
    return _Function(
        name=node.name,
        first=node.lineno,
        last=node.end_lineno or node.lineno,
        docstring=docstring,
        doc_first=first_stmt.lineno if docstring is not None else 0,
    )


@dataclass(frozen=True)
class _Text:
    """Text a model reads beside the placeholder."""

    what: str
    path: str
    line: int
    text: str


def _beside(task: Task, name: str, source: _Source) -> list[_Text]:
    """The docstring and comments the prompt shows beside the snippet's placeholder."""
    snippet = task.snippets[name]
    masked = range(snippet.start + 1, snippet.end + 2)  # 1-based, tags included
    texts: list[_Text] = []
    function = source.enclosing(snippet)
    lines: set[int] = set(source.block_above(snippet))
    if function is not None:
        if function.docstring and function.doc_first not in masked:
            texts.append(
                _Text(
                    f"the docstring of '{function.name}'",
                    snippet.path,
                    function.doc_first,
                    function.docstring,
                )
            )
        lines.update(n for n in source.comments if function.first <= n <= snippet.start)
    lines = {n for n in lines if n in source.comments and n not in masked}
    if lines:
        texts.append(
            _Text(
                "the comments above it",
                snippet.path,
                min(lines),
                "\n".join(source.comments[n] for n in sorted(lines)),
            )
        )
    return texts


def tokens(text: str) -> list[str]:
    """Names, numbers and operators of ``text``, normalised for comparison."""
    raw = _TOKEN.findall(text)
    out: list[str] = []
    i = 0
    while i < len(raw):
        token = raw[i]
        if token == "self" and i + 1 < len(raw) and raw[i + 1] == ".":
            i += 2
            continue
        if token[0].isdigit() or (token[0] == "." and token[1:2].isdigit()):
            with contextlib.suppress(ValueError):  # 1j stays as written
                token = repr(float(token))
        out.append(token)
        i += 1
    return out


def expression(line_tokens: list[str]) -> list[str]:
    """What a code line computes: the tokens after its assignment or leading keyword."""
    depth = 0
    for i, token in enumerate(line_tokens):
        if token in _OPENERS:
            depth += 1
        elif token in _CLOSERS:
            depth -= 1
        elif depth == 0 and token in _ASSIGNMENTS:
            found = line_tokens[i + 1 :]
            break
    else:
        found = line_tokens
        if found and found[0] in _LEADING_KEYWORDS:
            found = found[1:]
    while found and found[-1] in {",", ":", ";", "\\"}:
        found = found[:-1]
    return found


def _operand(token: str) -> bool:
    return (token[0].isdigit() or _NAME.fullmatch(token) is not None) and not keyword.iskeyword(
        token
    )


def restated(code: str, text_tokens: list[str], runs: dict[int, set[tuple[str, ...]]]) -> bool:
    """True when the expression of code line ``code`` is substantially contained in the text.

    ``runs`` caches the text's runs of tokens by length.
    """
    expr = expression(tokens(code))
    if len(expr) < MIN_EXPRESSION_TOKENS or sum(map(_operand, expr)) < 2:
        return False
    if not _COMPUTING.intersection(expr):  # a call documented with its arguments: an interface
        return False
    need = max(MIN_EXPRESSION_TOKENS, math.ceil(RESTATED_SHARE * len(expr)))
    if need > len(text_tokens):
        return False
    if need not in runs:
        runs[need] = {tuple(text_tokens[i : i + need]) for i in range(len(text_tokens) - need + 1)}
    return any(tuple(expr[i : i + need]) in runs[need] for i in range(len(expr) - need + 1))


def _restatements(task: Task, name: str, source: _Source) -> list[Problem]:
    snippet = task.snippets[name]
    problems = []
    for text in _beside(task, name, source):
        text_tokens = tokens(text.text)
        runs: dict[int, set[tuple[str, ...]]] = {}
        for number, code in _masked_code(task, name):
            if restated(code, text_tokens, runs):
                problems.append(
                    Problem(
                        str(task.root / snippet.path),
                        number,
                        f"snippet '{name}': masked line `{_short(code)}` is restated by "
                        f"{text.what} ({text.path}:{text.line}), which the prompt shows; "
                        "reword that text, or mask it with the code",
                    )
                )
    return problems


def formula_line(text: str) -> str | None:
    """The first formula-like line of ``text`` (see the module docstring), else None."""
    for line in text.splitlines():
        plain = _URL.sub(" ", line)
        if _MATH.search(plain) or _EQUATION.search(plain) or len(_OPERATOR.findall(plain)) >= 2:
            return line.strip()
    return None


def prose_lines(docstring: str) -> int:
    """Non-blank docstring lines outside Args:/Returns:-style sections."""
    count = 0
    in_section = False
    lines = docstring.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        underlined = i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        if _SECTION.match(stripped) or underlined:
            in_section = True
        if stripped and not in_section and not re.fullmatch(r"-{3,}", stripped):
            count += 1
    return count


def _review_reason(text: str, prose: int) -> str | None:
    formula = formula_line(text)
    if formula is not None:
        return f"has a formula-like line (`{_short(formula, 60)}`)"
    if prose > MAX_PROSE_LINES:
        return f"has {prose} lines of prose"
    return None


def _review_warnings(task: Task, sources: dict[str, _Source]) -> list[Problem]:
    """One warning per docstring or comment block beside masked snippets that may give
    them away: a person decides."""
    found: dict[tuple[str, int], tuple[str, str, list[str]]] = {}
    for name in task.snippet_names():
        snippet = task.snippets[name]
        source = sources[snippet.path]
        function = source.enclosing(snippet)
        masked = range(snippet.start + 1, snippet.end + 2)
        if function is not None and function.docstring and function.doc_first not in masked:
            reason = _review_reason(function.docstring, prose_lines(function.docstring))
            if reason:
                key = (snippet.path, function.doc_first)
                what = f"the docstring of '{function.name}'"
                found.setdefault(key, (what, reason, []))[2].append(name)
        block = [n for n in source.block_above(snippet) if n in source.comments]
        if block:
            text = "\n".join(source.comments[n] for n in block)
            reason = _review_reason(text, len(block))
            if reason:
                key = (snippet.path, block[0])
                found.setdefault(key, ("the comment block", reason, []))[2].append(name)
    warnings = []
    for (path, line), (what, reason, names) in sorted(found.items()):
        warnings.append(
            Problem(
                str(task.root / path),
                line,
                f"{what} above snippet(s) {_names(names)} {reason}: review that it does "
                "not give the masked code away",
            )
        )
    return warnings


def _names(names: Iterable[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)
