"""The LLM judge: the plan and the code graded against the task's rubric.

The judge sees the paper (its own text, from the paper pipeline), the experiment's
specification (``experiment.md``), the rubric, the plan the agent wrote before any code,
the code it left and, once the harness reran the code, the reruns' results and the
agent's conclusions. For every rubric item it grades the plan alone and the
implementation, each from 0 to 1. The plan grades give the attempt's plan score;
the implementation grades give method accuracy and experiment design, each the
weighted mean over its items. With results shown, it also grades whether the
conclusions follow from them (``conclusions``), which experiment design needs too.
The prompt and the answer are kept, so a grade can be audited and recomputed.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from rcb_action.models import CompletionRequest, Model, ModelCallError
from rcb_action.prompts import Prompt
from rcb_action.reproduce._records import JudgeItem, JudgeRecord
from rcb_action.reproduce._texts import ReproductionTexts
from rcb_action.tasks import Rubric, Task

MAX_PAPER_CHARS = 40_000
MAX_CODE_CHARS = 60_000
JUDGE_ATTEMPTS = 2

_INSTRUCTIONS = """\
You grade an attempt by an AI agent to reproduce the main experiment of a research
paper. Below are the experiment the agent was asked to run (rcb's specification, at a
scale that fits its sandbox), the paper, the grading rubric, the implementation plan
the agent wrote before writing any code, and the code it left.

For every rubric item give two grades between 0 and 1:
- "plan": how well the plan alone meets the item's criterion;
- "implementation": how well the code (read together with the plan) meets it.
1 means fully met, 0 not met or absent; use values in between for partial credit.
Grade what is written, not what might have been intended.

Answer with one JSON object and nothing else:
{"items": [{"id": "<item id>", "plan": 0.0, "implementation": 0.0, "reason": "<one sentence>"}]}
"""


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[rcb: cut here; {len(text) - limit} more characters]\n"


CONCLUSIONS_ID = "conclusions"
_CONCLUSIONS = """
The harness reran the agent's code itself, with seeds of its own; its results are below,
with the agent's written conclusions. Also grade whether those conclusions follow from
the harness's results (1: every claim is supported by the numbers shown; 0: none were
written, or they claim what the results do not show), as one more entry of "items":
{"id": "conclusions", "plan": 0.0, "implementation": <the grade>, "reason": "<one sentence>"}
"""


def judge_prompt(
    task: Task,
    texts: ReproductionTexts,
    plan: str,
    code: dict[str, str],
    results: str | None = None,
    conclusions: str | None = None,
) -> str:
    """The judge's prompt: deterministic for the same inputs. ``results`` (the reruns'
    results, as the result check reports them) adds the conclusions grade."""
    assert task.rubric is not None
    rubric = "\n".join(
        f"- {item.id} ({item.dimension}, weight {item.weight:g}): {item.criterion}"
        for item in task.rubric.items
    )
    files: list[str] = []
    used = 0
    for path, text in sorted(code.items()):
        block = f"### {path}\n```\n{text}\n```\n"
        if used + len(block) > MAX_CODE_CHARS:
            files.append(f"[rcb: {len(code) - len(files)} more file(s) left out for length]\n")
            break
        files.append(block)
        used += len(block)
    text = (
        f"{_INSTRUCTIONS}{_CONCLUSIONS if results is not None else ''}"
        f"\n## The experiment (experiment.md)\n\n{texts.experiment.strip()}\n\n"
        f"## The paper: {task.config.title} ({task.config.citation})\n\n"
        f"{_cut(texts.paper_text, MAX_PAPER_CHARS)}\n\n## Rubric\n\n{rubric}\n\n"
        f"## The agent's plan (plan.md)\n\n{plan.strip() or '(no plan was written)'}\n\n"
        f"## The agent's code\n\n{''.join(files) or '(no code was written)'}\n"
    )
    if results is not None:
        written = (conclusions or "").strip() or "(no conclusions were written)"
        text += (
            f"\n## The harness's reruns: results\n\n{results.strip()}\n\n"
            f"## The agent's conclusions (conclusions.md)\n\n{_cut(written, 8000)}\n"
        )
    return text


def _json_object(answer: str) -> Any:
    text = answer.strip()
    fenced = re.findall(r"```(?:json)?\s*\n(.*?)```", text, re.S)
    candidates = [*fenced[::-1], text]
    if "{" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise ValueError("the answer holds no JSON object")


def parse_judgement(answer: str, rubric: Rubric, *, conclusions: bool = False) -> list[JudgeItem]:
    """The graded items of a judge's answer, in the rubric's order (then the conclusions
    grade, when it was asked for).

    Raises:
        ValueError: no JSON object, or an item missing or graded out of [0, 1].
    """
    data = _json_object(answer)
    rows = data.get("items") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ValueError("the answer has no list 'items'")
    by_id = {str(row.get("id")): row for row in rows if isinstance(row, dict)}
    wanted: list[tuple[str, str, float]] = [(i.id, i.dimension, i.weight) for i in rubric.items]
    if conclusions:
        wanted.append((CONCLUSIONS_ID, CONCLUSIONS_ID, 1.0))
    items = []
    for item_id, dimension, weight in wanted:
        row = by_id.get(item_id)
        if row is None:
            raise ValueError(f"the answer grades no item '{item_id}'")
        grades = {}
        for key in ("plan", "implementation"):
            value = row.get(key, 0.0 if item_id == CONCLUSIONS_ID else None)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"item '{item_id}': '{key}' must be a number in [0, 1]")
            grades[key] = float(value)
        items.append(
            JudgeItem(
                id=item_id,
                dimension=dimension,
                weight=weight,
                reason=str(row.get("reason", ""))[:1000],
                **grades,
            )
        )
    return items


def judge_scores(items: list[JudgeItem]) -> dict[str, float | None]:
    """Weighted means: ``plan`` over every item; each judged dimension over its items."""

    def mean(rows: list[JudgeItem], key: str) -> float | None:
        total = sum(r.weight for r in rows)
        return sum(r.weight * getattr(r, key) for r in rows) / total if total else None

    rubric = [i for i in items if i.dimension != CONCLUSIONS_ID]
    scores = {
        "plan": mean(rubric, "plan"),
        "method_accuracy": mean(
            [i for i in items if i.dimension == "method_accuracy"], "implementation"
        ),
        "experiment_design": mean(
            [i for i in items if i.dimension == "experiment_design"], "implementation"
        ),
    }
    concluded = [i for i in items if i.dimension == CONCLUSIONS_ID]
    if concluded:
        scores[CONCLUSIONS_ID] = mean(concluded, "implementation")
    return scores


def run_judge(
    judge: Model,
    task: Task,
    sample: int,
    prompt_text: str,
    log_dir: Path,
    out: Path,
    *,
    conclusions: bool = False,
) -> JudgeRecord:
    """Ask the judge (retrying once on an unreadable answer) and keep both sides: every
    prompt sent in ``judge-prompt.md`` (``prompt_sha`` is the first one's), every answer
    in ``judge-answer.md``.

    A provider failure or an unreadable answer leaves ``error`` set and no items:
    the judged dimensions are then not graded, never failed.
    """
    assert task.rubric is not None
    log_dir.mkdir(parents=True, exist_ok=True)
    prompt_path = log_dir / "judge-prompt.md"
    prompt_path.write_text(prompt_text, encoding="utf-8")
    sha = hashlib.sha256(prompt_text.encode()).hexdigest()[:16]
    record = JudgeRecord(
        model=judge.name, prompt_sha=sha, prompt_log=str(prompt_path.relative_to(out))
    )
    text = prompt_text
    answers = []
    for attempt in range(JUDGE_ATTEMPTS):
        prompt = Prompt(
            task_id=task.id,
            snippet="(judge)",
            text=text,
            sha=sha,
            paper=True,
            paper_chars=0,
            paper_chars_kept=0,
        )
        try:
            completion = judge.complete(
                CompletionRequest(task=task, snippet="(judge)", sample=sample, prompt=prompt)
            )
        except ModelCallError as exc:
            record.error = f"the judge did not answer: {exc}"[:500]
            break
        record.tokens_in += completion.tokens_in
        record.tokens_out += completion.tokens_out
        record.cost_usd += completion.cost_usd
        answers.append(f"--- answer {attempt + 1}\n{completion.text}\n")
        record.answer = completion.text
        try:
            record.items = parse_judgement(completion.text, task.rubric, conclusions=conclusions)
            record.error = None
            break
        except ValueError as exc:
            record.error = f"unreadable judgement: {exc}"
            text = (
                f"{prompt_text}\n\nYour previous answer could not be read ({exc}). "
                "Answer with the JSON object only."
            )
            # Every prompt sent is kept: the retry follows the first one in the same log.
            with prompt_path.open("a", encoding="utf-8") as log:
                log.write(f"\n\n--- prompt {attempt + 2} (retry)\n{text}")
    answer_path = log_dir / "judge-answer.md"
    answer_path.write_text("".join(answers), encoding="utf-8")
    record.answer_log = str(answer_path.relative_to(out))
    return record
