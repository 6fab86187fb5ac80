"""Build the exact prompt for one (task, snippet): deterministic bytes and their sha.

The prompt holds, in this order: the paper (or, for ``--paper notes``, the task's
notes; nothing for ``--paper without``), the instructions, the context files in
full, and the annotated file with the target snippet replaced by a placeholder at
the start tag's indentation. Every other tag line is stripped; snippets nested in
the target vanish with it. Tests are never shown.

The paper comes first and its section is the same bytes for every snippet of the
task, so a provider's prompt cache can serve it: ``Prompt.prefix_chars`` is its
length (the cache breakpoint a provider such as Anthropic needs marked).

Context-window rule (documented in the README): the prompt must fit in
``(context_window - reserved_output_tokens) * CHARS_PER_TOKEN`` characters. When
it does not, only the paper is cut: its head is kept, cut back to the last
paragraph break, and a marker line says how much was kept. If even the paper-less
prompt does not fit, the paper is dropped entirely. The record notes both.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from rcb_action.papers import Paper, notes_for, paper_for
from rcb_action.tasks import Task, is_tag_line

PLACEHOLDER = '# TODO: Implement block "{name}"'
# A deliberately low estimate (real tokenizers give about 4 for English and code),
# so a prompt judged to fit does fit.
CHARS_PER_TOKEN = 3
RESERVED_OUTPUT_TOKENS = 4096
# What the prompt carries: the paper, nothing, or the task's notes instead of the paper.
PaperMode = Literal["with", "without", "notes"]

_INSTRUCTIONS = """\
## Your task

You are implementing one block of code in the codebase of a research paper.
Read the paper and the code, then write the missing block so that the code
implements the method exactly as the paper describes it.

The block to write is marked in the file below by the comment
`{placeholder}`, followed by a comment giving its approximate length.
Reply with the code of that block only, in one fenced ```python block. Do not
repeat the rest of the file; the block is inserted in place of the two marker
lines, re-indented to their indentation.
"""


@dataclass(frozen=True)
class Prompt:
    """A built prompt and what went into it.

    Attributes:
        paper: the paper was given (``--paper with``).
        notes: the task's notes were given instead of the paper (``--paper notes``).
        paper_sha: sha256 of the full text given (the paper's, or the notes'), else None.
        prefix_chars: the length of the leading text that is the same for every
            snippet of this paper (its section); 0 when there is none.
    """

    task_id: str
    snippet: str
    text: str
    sha: str
    paper: bool
    paper_chars: int
    paper_chars_kept: int
    paper_sha: str | None = None
    notes: bool = False
    prefix_chars: int = 0

    @property
    def paper_truncated(self) -> bool:
        return (self.paper or self.notes) and self.paper_chars_kept < self.paper_chars

    @property
    def mode(self) -> PaperMode:
        return "with" if self.paper else "notes" if self.notes else "without"


def masked_file(task: Task, snippet_name: str) -> tuple[list[str], int]:
    """The target file with the snippet masked and all tags stripped.

    Returns:
        The lines (with line endings) and the index of the first placeholder line;
        the placeholder is two lines long.
    """
    snippet = task.snippets[snippet_name]
    annotated = task.files[snippet.path]
    lines = annotated.lines
    weight = annotated.weight(snippet)
    plural = "line" if weight == 1 else "lines"
    before = [line for line in lines[: snippet.start] if not is_tag_line(line)]
    after = [line for line in lines[snippet.end + 1 :] if not is_tag_line(line)]
    placeholder = [
        f"{snippet.indent}{PLACEHOLDER.format(name=snippet_name)}\n",
        f"{snippet.indent}# Approximately {weight} {plural} of code.\n",
    ]
    return before + placeholder + after, len(before)


def _fence(path: str, text: str) -> str:
    if not text.endswith("\n"):
        text += "\n"
    return f"### {path}\n```python\n{text}```\n"


def _cut_paper(paper: str, over_by: int) -> str:
    keep = len(paper) - over_by
    if keep <= 0:
        return ""
    head = paper[:keep]
    cut = head.rfind("\n\n")
    if cut > 0:
        head = head[:cut]
    return head.rstrip() + "\n"


def _paper_section(task: Task, mode: PaperMode, text: str, note: str) -> str:
    """The leading section: identical bytes for every snippet of the task."""
    what = "The paper" if mode == "with" else "Notes on the method (instead of the paper)"
    return f"## {what}: {task.config.title} ({task.config.citation})\n\n{text}{note}"


def _assemble(task: Task, snippet_name: str, section: str) -> str:
    snippet = task.snippets[snippet_name]
    parts = [section] if section else []
    parts.append(_INSTRUCTIONS.format(placeholder=PLACEHOLDER.format(name=snippet_name)))
    shown = [rel for rel in task.config.context if rel != snippet.path]
    shown += [rel for rel in task.config.annotated if rel != snippet.path and rel not in shown]
    if shown:
        parts.append("## Context files\n\n" + "\n".join(_context(task, rel) for rel in shown))
    masked, _ = masked_file(task, snippet_name)
    parts.append(f"## The file to complete\n\n{_fence(snippet.path, ''.join(masked))}")
    parts.append(
        f'Write the block "{snippet_name}" now: one ```python block holding only its code.\n'
    )
    return "\n".join(parts)


def _context(task: Task, rel: str) -> str:
    if rel in task.files:
        text = "".join(task.files[rel].stripped())
    else:
        text = (task.root / rel).read_text(encoding="utf-8")
    return _fence(rel, text)


def build_prompt(
    task: Task,
    snippet_name: str,
    *,
    paper: PaperMode | bool = "with",
    context_window: int | None = None,
    reserved_output_tokens: int = RESERVED_OUTPUT_TOKENS,
    text: Paper | None = None,
) -> Prompt:
    """Build the prompt for one snippet.

    Args:
        task: the loaded task.
        snippet_name: the snippet to mask.
        paper: ``"with"`` the paper, ``"without"`` (the no-paper ablation) or
            ``"notes"`` (the task's notes.md instead of the paper); True and
            False mean with and without.
        context_window: the model's context window in tokens, when known; the
            paper is cut to fit it (see the module docstring for the rule).
        reserved_output_tokens: tokens kept free for the answer.
        text: the paper (or notes) already resolved; by default it is read
            (:func:`rcb_action.papers.paper_for`, which may fetch it once).

    Raises:
        KeyError: if the snippet does not exist in the task.
        PaperUnavailable: the paper (or notes) cannot be had; nothing else is used.
    """
    if snippet_name not in task.snippets:
        raise KeyError(snippet_name)
    mode: PaperMode = ("with" if paper else "without") if isinstance(paper, bool) else paper
    if mode == "without":
        source = None
    elif text is not None:
        source = text
    else:
        source = paper_for(task) if mode == "with" else notes_for(task)
    full = source.text.rstrip("\n") + "\n" if source is not None else None
    section = _paper_section(task, mode, full, "") if full is not None else ""
    prompt_text = _assemble(task, snippet_name, section)
    kept = len(full) if full is not None else 0
    if full is not None and context_window:
        budget = (
            max(context_window - min(reserved_output_tokens, context_window // 4), 0)
            * CHARS_PER_TOKEN
        )
        if len(prompt_text) > budget:
            note_template = (
                "\n[rcb: the paper was cut to {kept} of {total} characters to fit the "
                "model's context window]\n"
            )
            longest_note = len(note_template.format(kept=len(full), total=len(full)))
            cut = _cut_paper(full, len(prompt_text) - budget + longest_note)
            kept = len(cut)
            note = note_template.format(kept=kept, total=len(full))
            section = _paper_section(task, mode, cut, note) if cut else ""
            prompt_text = _assemble(task, snippet_name, section)
    sha = hashlib.sha256(prompt_text.encode("utf-8")).hexdigest()[:16]
    return Prompt(
        task_id=task.id,
        snippet=snippet_name,
        text=prompt_text,
        sha=sha,
        paper=mode == "with",
        paper_chars=len(full) if full is not None else 0,
        paper_chars_kept=kept,
        paper_sha=source.sha if source is not None else None,
        notes=mode == "notes",
        prefix_chars=len(section),
    )
