"""Build the exact prompt for one (task, snippet): deterministic bytes and their sha.

The prompt holds the instructions, the paper (unless the no-paper ablation), the
context files in full, and the annotated file with the target snippet replaced by
a placeholder at the start tag's indentation. Every other tag line is stripped;
snippets nested in the target vanish with it. Tests are never shown.

Context-window rule (documented in the README): the prompt must fit in
``(context_window - reserved_output_tokens) * CHARS_PER_TOKEN`` characters. When
it does not, only the paper is cut: its head is kept, cut back to the last
paragraph break, and a marker line says how much was kept. If even the paper-less
prompt does not fit, the paper is dropped entirely. The record notes both.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from rcb_action.prompts._paper import paper_text
from rcb_action.tasks import Task, code_lines
from rcb_action.tasks._tags import is_tag_line

PLACEHOLDER = '# TODO: Implement block "{name}"'
# A deliberately low estimate (real tokenizers give about 4 for English and code),
# so a prompt judged to fit does fit.
CHARS_PER_TOKEN = 3
RESERVED_OUTPUT_TOKENS = 4096

_INSTRUCTIONS = """\
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
    """A built prompt and what went into it."""

    task_id: str
    snippet: str
    text: str
    sha: str
    paper: bool
    paper_chars: int
    paper_chars_kept: int

    @property
    def paper_truncated(self) -> bool:
        return self.paper and self.paper_chars_kept < self.paper_chars


def masked_file(task: Task, snippet_name: str) -> tuple[list[str], int]:
    """The target file with the snippet masked and all tags stripped.

    Returns:
        The lines (with line endings) and the index of the first placeholder line;
        the placeholder is two lines long.
    """
    snippet = task.snippets[snippet_name]
    annotated = task.files[snippet.path]
    lines = annotated.lines
    weight = code_lines(lines[snippet.start + 1 : snippet.end])
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


def _assemble(task: Task, snippet_name: str, paper: str | None, paper_note: str) -> str:
    snippet = task.snippets[snippet_name]
    parts = [_INSTRUCTIONS.format(placeholder=PLACEHOLDER.format(name=snippet_name))]
    if paper is not None:
        parts.append(
            f"## The paper: {task.config.title} ({task.config.citation})\n\n{paper}{paper_note}"
        )
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
    paper: bool = True,
    context_window: int | None = None,
    reserved_output_tokens: int = RESERVED_OUTPUT_TOKENS,
) -> Prompt:
    """Build the prompt for one snippet.

    Args:
        task: the loaded task.
        snippet_name: the snippet to mask.
        paper: include the paper (``False`` is the no-paper ablation).
        context_window: the model's context window in tokens, when known; the
            paper is cut to fit it (see the module docstring for the rule).
        reserved_output_tokens: tokens kept free for the answer.

    Raises:
        KeyError: if the snippet does not exist in the task.
    """
    if snippet_name not in task.snippets:
        raise KeyError(snippet_name)
    full = paper_text(task) if paper else None
    text = _assemble(task, snippet_name, full, "")
    kept = len(full) if full is not None else 0
    if full is not None and context_window:
        budget = (
            max(context_window - min(reserved_output_tokens, context_window // 4), 0)
            * CHARS_PER_TOKEN
        )
        if len(text) > budget:
            note_template = (
                "\n[rcb: the paper was cut to {kept} of {total} characters to fit the "
                "model's context window]\n"
            )
            longest_note = len(note_template.format(kept=len(full), total=len(full)))
            cut = _cut_paper(full, len(text) - budget + longest_note)
            kept = len(cut)
            note = note_template.format(kept=kept, total=len(full))
            text = _assemble(task, snippet_name, cut, note)
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return Prompt(
        task_id=task.id,
        snippet=snippet_name,
        text=text,
        sha=sha,
        paper=paper,
        paper_chars=len(full) if full is not None else 0,
        paper_chars_kept=kept,
    )
