"""Model submissions by pull request: ``submissions/<slug>/{model.yaml,completions.jsonl}``.

``model.yaml`` is a models-registry file with exactly one entry (the model's
name, display name, provider and knowledge cutoff); ``completions.jsonl`` is a
replay file whose every line names that model. A pull request is scored with
``replay:`` (no key needed); the evaluation on merge scores every submission.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from pydantic import ValidationError

from rcb_action.errors import RcbError, TaskError
from rcb_action.models import SUBMISSION_REGISTRY
from rcb_action.names import check_model_name
from rcb_action.tasks import Task
from rcb_action.validate import Problem

SUBMISSIONS_DIR = "submissions"
MODEL_FILE = SUBMISSION_REGISTRY  # its cutoff is shown as declared by the submitter
COMPLETIONS_FILE = "completions.jsonl"
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_RESERVED = {"reference", "null"}


@dataclass(frozen=True)
class Submission:
    """A checked submission folder."""

    root: Path
    model: str

    @property
    def completions(self) -> Path:
        return self.root / COMPLETIONS_FILE

    @property
    def registry(self) -> Path:
        return self.root / MODEL_FILE

    @property
    def spec(self) -> str:
        """The ``--model`` argument that scores it."""
        return f"replay:{self.completions.as_posix()}"


def find_submissions(root: Path) -> list[Path]:
    """Submission folders under ``root`` (``_`` and ``.`` prefixed folders are not)."""
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir()
        and not p.name.startswith(("_", "."))
        and ((p / MODEL_FILE).exists() or (p / COMPLETIONS_FILE).exists())
    )


def _model_entry(path: Path, problems: list[Problem]) -> str | None:
    from rcb_action.errors import format_validation_error
    from rcb_action.models import ModelInfo, load_registry

    label = str(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(
            Problem(label, None, f"missing: add {MODEL_FILE} (see submissions/README.md)")
        )
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problems.append(
            Problem(
                label,
                mark.line + 1 if mark else None,
                f"invalid YAML ({getattr(exc, 'problem', exc)})",
            )
        )
        return None
    models = raw.get("models") if isinstance(raw, dict) else None
    if not isinstance(models, dict) or len(models) != 1:
        problems.append(
            Problem(label, None, "expected 'models:' with exactly one entry: the submitted model")
        )
        return None
    raw_name, entry = next(iter(models.items()))
    try:
        name = check_model_name(raw_name, "key 'models'")
    except RcbError as exc:
        problems.append(Problem(label, None, str(exc)))
        return None
    try:
        info = ModelInfo.model_validate(entry or {})
    except ValidationError as exc:
        line = format_validation_error(label, exc)
        problems.append(
            Problem(
                label,
                None,
                line.removeprefix(f"{label}: ").replace("key '", f"key 'models.{name}.", 1),
            )
        )
        return None
    if name in _RESERVED or name.startswith("replay:") or not name.strip():
        problems.append(Problem(label, None, f"model name '{name}' is reserved; choose another"))
    elif (builtin := load_registry().get(name)) is not None and not builtin.submitted:
        problems.append(
            Problem(
                label,
                None,
                f"model name '{name}' is in the built-in registry; submit under a name of your own",
            )
        )
    if info.knowledge_cutoff is None:
        problems.append(
            Problem(
                label,
                None,
                f"key 'models.{name}.knowledge_cutoff': required for a submission (the contamination clock)",
            )
        )
    return name


_BROKEN = object()  # a task that exists but does not load: rcb validate reports it


def _load_or_none(folder: Path) -> object | None:
    from rcb_action.tasks import load_task

    if not (folder / "task.yaml").is_file():
        return None
    try:
        return load_task(folder)
    except TaskError:
        return _BROKEN


def _check_completions(
    path: Path, model: str | None, tasks_dir: Path | None, problems: list[Problem]
) -> None:
    from rcb_action.models import ReplayModel
    from rcb_action.tasks import resolve_tasks_dir
    from rcb_action.validate import problem_from_error

    if not path.is_file():
        problems.append(
            Problem(str(path), None, f"missing: add {COMPLETIONS_FILE} (see submissions/README.md)")
        )
        return
    try:
        ReplayModel(path)  # the replay format itself: fields, types, duplicates
    except RcbError as exc:
        problems.append(problem_from_error(str(exc)))
        return
    root = resolve_tasks_dir(tasks_dir)
    tasks: dict[str, object | None] = {}
    count = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        count += 1
        row = json.loads(line)
        where = str(path)
        if model is not None and row.get("model") != model:
            problems.append(
                Problem(
                    where, number, f"field 'model' must be '{model}' (the name in {MODEL_FILE})"
                )
            )
        task_id, snippet = row["task"], row["snippet"]
        if task_id not in tasks:
            tasks[task_id] = _load_or_none(root / task_id) if _SLUG.match(task_id) else None
        task = tasks[task_id]
        if task is None:
            problems.append(Problem(where, number, f"task '{task_id}' is not in {root}"))
        elif isinstance(task, Task) and snippet not in task.snippets:
            problems.append(
                Problem(where, number, f"task '{task_id}' has no snippet named '{snippet}'")
            )
    if count == 0:
        problems.append(Problem(str(path), None, "no completions in the file"))


def check_submission(
    folder: Path, tasks_dir: Path | None = None
) -> tuple[Submission | None, list[Problem]]:
    """Check one submission folder; the submission is None when it has problems."""
    problems: list[Problem] = []
    if not _SLUG.match(folder.name):
        problems.append(
            Problem(
                str(folder), None, "folder name: use lower-case letters, digits, '.', '_' and '-'"
            )
        )
    model = _model_entry(folder / MODEL_FILE, problems)
    _check_completions(folder / COMPLETIONS_FILE, model, tasks_dir, problems)
    if problems or model is None:
        return None, problems
    return Submission(folder, model), problems


def check_submissions(
    folders: Iterable[Path], tasks_dir: Path | None = None
) -> tuple[list[Submission], list[Problem]]:
    """Check several submissions; two folders may not submit the same model name."""
    found: list[Submission] = []
    problems: list[Problem] = []
    for folder in folders:
        submission, mine = check_submission(Path(folder), tasks_dir)
        problems += mine
        if submission is None:
            continue
        twin = next((s for s in found if s.model == submission.model), None)
        if twin is not None:
            problems.append(
                Problem(
                    str(submission.registry),
                    None,
                    f"model '{submission.model}' is also submitted in {twin.root}",
                )
            )
            continue
        found.append(submission)
    return found, problems
