"""Built-in models that need no key: ``reference``, ``null`` and ``replay:FILE``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rcb_action.errors import RcbError
from rcb_action.models._base import Completion, CompletionRequest, Model
from rcb_action.names import check_model_name
from rcb_action.prompts import Prompt
from rcb_action.text import utf8_safe_data


def fenced(code: str) -> str:
    """``code`` as a fenced python block, the way a model is asked to answer."""
    if not code.endswith("\n"):
        code += "\n"
    return f"```python\n{code}```\n"


class ReferenceModel(Model):
    """Answers with the true snippet: proves every task solvable and the splice exact."""

    name = "reference"
    reads_prompt = False

    def complete(self, request: CompletionRequest) -> Completion:
        return Completion(text=fenced("".join(request.task.reference_body(request.snippet))))


class NullModel(Model):
    """Answers with an empty body (``pass``): proves the tests discriminate."""

    name = "null"
    reads_prompt = False

    def complete(self, request: CompletionRequest) -> Completion:
        return Completion(text=fenced("pass"))


def read_replay(
    path: Path, strings: tuple[str, ...], optional: set[str]
) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The rows of a replay JSONL file, checked, with their ``file:line``; and the name
    results are recorded under: the ``model`` every row names, else ``replay:<stem>``.

    Every string of a row, keys included, has its lone surrogates replaced by U+FFFD
    (:func:`rcb_action.text.utf8_safe`), so nothing read here can break a writer.

    Args:
        path: the file.
        strings: fields every row must have, as strings.
        optional: other fields a row may have (``sample`` defaults to 0).

    Raises:
        RcbError: the file is missing or a row is malformed (one line, ``file:line``).
    """
    option = f"--model replay:{path}"
    if not path.exists():
        raise RcbError(f"{option}: replay file not found (give a JSONL file)")
    if not path.is_file():
        kind = "a directory" if path.is_dir() else "not a regular file"
        raise RcbError(f"{option}: not a file ({kind}; give a JSONL file)")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RcbError(f"{option}: not a file that can be read ({exc.strerror})") from None
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise RcbError(
            f"{option}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None
    rows: list[tuple[str, dict[str, Any]]] = []
    names: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            # JSON escapes can spell lone surrogates ("\\ud800"): every string is made valid.
            row = utf8_safe_data(json.loads(line))
        except json.JSONDecodeError as exc:
            raise RcbError(f"{where}: not valid JSON ({exc.msg})") from None
        except ValueError as exc:  # e.g. an integer past Python's digit limit
            raise RcbError(f"{where}: not valid JSON ({exc})") from None
        except RecursionError:
            raise RcbError(f"{where}: not valid JSON (nested too deeply)") from None
        if not isinstance(row, dict):
            raise RcbError(f"{where}: expected a JSON object")
        for field in strings:
            if not isinstance(row.get(field), str):
                raise RcbError(f"{where}: field '{field}' must be a string")
        sample = row.setdefault("sample", 0)
        if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
            raise RcbError(f"{where}: field 'sample' must be a non-negative integer")
        unknown = set(row) - set(strings) - optional
        if unknown:
            raise RcbError(f"{where}: unknown field '{sorted(unknown)[0]}'")
        if "model" in row:  # a name that reaches reports and paths: checked here
            names.add(check_model_name(row["model"], f"{where}: field 'model'"))
        rows.append((where, row))
    return rows, names.pop() if len(names) == 1 else f"replay:{path.stem}"


class ReplayModel(Model):
    """Completions made elsewhere, from a JSONL file.

    One completion a line: ``{"task", "snippet", "sample" (default 0), "completion"}``
    and optionally ``"model"``, ``"paper"`` (the condition it answers: with, without,
    notes; else any), ``"prompt_sha"`` and ``"prompt"`` (as ``rcb prompt --all``
    writes them; ``prompt`` is not read). When every line names the same model, results
    are recorded under that name; otherwise under ``replay:<file stem>``. A snippet
    missing from the file is answered with nothing and scored ``no_code``.

    A file whose lines carry ``prompt_sha`` is checked against the prompts of the run
    before anything runs (:meth:`check_prompt`), and its records carry the real prompt
    (with the paper when the run gives it), like a live model's.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._rows: dict[tuple[str, str, int, str | None], tuple[str, dict[str, Any]]] = {}
        rows, self.name = read_replay(
            path,
            ("task", "snippet", "completion"),
            {"sample", "model", "paper", "prompt_sha", "prompt"},
        )
        for where, row in rows:
            for field in ("paper", "prompt_sha", "prompt"):
                if field in row and not isinstance(row[field], str):
                    raise RcbError(f"{where}: field '{field}' must be a string")
            if row.get("paper", "with") not in ("with", "without", "notes"):
                raise RcbError(f"{where}: field 'paper' must be with, without or notes")
            key = (row["task"], row["snippet"], row["sample"], row.get("paper"))
            if key in self._rows:
                raise RcbError(
                    f"{where}: a second completion for task {key[0]!r} snippet {key[1]!r} "
                    f"sample {key[2]}" + (f" paper {key[3]}" if key[3] else "")
                )
            self._rows[key] = (where, row)
        # Answers made for known prompts, or for a stated condition, are matched against
        # the prompts the run builds, as a live model's would be.
        self.reads_prompt = any(
            "prompt_sha" in row or "paper" in row for _, row in self._rows.values()
        )

    def _row(
        self, task_id: str, snippet: str, sample: int, paper: str
    ) -> tuple[str, dict[str, Any]] | None:
        return self._rows.get((task_id, snippet, sample, paper)) or self._rows.get(
            (task_id, snippet, sample, None)
        )

    def check_prompt(self, task_id: str, snippet: str, sample: int, prompt: Prompt) -> None:
        found = self._row(task_id, snippet, sample, prompt.mode)
        if found is None:
            return
        where, row = found
        sha = row.get("prompt_sha")
        if sha is not None and sha != prompt.sha:
            raise RcbError(
                f"{where}: prompt_sha {sha[:12]} is not the current prompt of task {task_id!r} "
                f"snippet {snippet!r} (paper {prompt.mode}: {prompt.sha[:12]}); the task or its "
                "paper changed since the export: export again with rcb prompt --all"
            )

    def complete(self, request: CompletionRequest) -> Completion:
        found = self._row(request.task.id, request.snippet, request.sample, request.prompt.mode)
        return Completion(text=found[1]["completion"] if found else "")
