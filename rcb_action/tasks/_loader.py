"""Load task folders into plain :class:`Task` objects."""

from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from rcb_action.errors import RcbError, TaskError, format_validation_error
from rcb_action.tasks._plain import check_plain_tree, not_plain, read_plain_file
from rcb_action.tasks._requirements import pinned_requirement, read_requirements
from rcb_action.tasks._schema import ExpectedResults, Rubric, TaskConfig
from rcb_action.tasks._tags import AnnotatedFile, Snippet, TagError, parse_tags

_IGNORED_PARTS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
# Files in a task folder that describe the task and never enter a sandbox.
# The names a task's copy of the authors' licence may have.
LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING")
# A task's shared input builders: copied into the run and the check sandbox, importable
# in both (on PYTHONPATH), never shown to the model.
INPUTS_DIR = "inputs"
# A reproduction task's data, one folder per split (``data/train/``, ``data/test/``),
# copied read-only into the agent's folder; ``data/<split>-swap/`` holds the files that
# replace a held-out split in the harness's leakage rerun and never reach the agent.
DATA_DIR = "data"
# A reproduction task's specification of the experiment at its scale (settings, seeds, what
# to report), written for rcb; given to the agent and the judge beside the paper, never as it.
EXPERIMENT_FILE = "experiment.md"
SWAP_SUFFIX = "-swap"
_META_FILES = {
    "task.yaml", EXPERIMENT_FILE, "paper.tex", "notes.md", "expected.yaml", "rubric.yaml",
    "mutants.json", *LICENSE_FILES,
}  # fmt: skip
# Derived files that do not change what is scored, so they leave the task hash alone.
_UNHASHED = {"mutants.json"}
_Model = TypeVar("_Model", bound=BaseModel)


@dataclass
class Task:
    """A loaded, checked task folder."""

    config: TaskConfig
    root: Path
    files: dict[str, AnnotatedFile]
    snippets: dict[str, Snippet]
    sha: str
    env_dir: Path
    sandbox_files: list[str] = field(default_factory=list)
    # "cases": the cases run with the code under test (run sandbox), the checks in a
    # sandbox of their own; "in-process": pytest imports the code under test (forgeable).
    grading: Literal["cases", "in-process"] = "in-process"
    # Cases and checks only: the files of the run sandbox and of the check sandbox.
    run_files: list[str] = field(default_factory=list)
    check_files: list[str] = field(default_factory=list)
    # Reproduction tasks only: expected.yaml and rubric.yaml.
    expected: ExpectedResults | None = None
    rubric: Rubric | None = None

    @property
    def id(self) -> str:
        return self.config.id

    def snippet_names(self) -> list[str]:
        """Snippet names in file order, the order every report uses."""
        return list(self.snippets)

    def file_of(self, name: str) -> AnnotatedFile:
        return self.files[self.snippets[name].path]

    def weight(self, name: str) -> int:
        snippet = self.snippets[name]
        return self.files[snippet.path].weight(snippet)

    def reference_body(self, name: str) -> list[str]:
        snippet = self.snippets[name]
        return snippet.body(self.files[snippet.path].lines)

    def tests_for(self, name: str) -> list[str]:
        """The pytest selection that decides this snippet: its checks (or in-process
        tests), the whole folder by default."""
        chosen = self.config.snippets.get(name)
        if chosen:
            return chosen.selection
        return [self.config.checks_dir if self.grading == "cases" else self.config.tests_dir]

    def read_bytes(self, rel: str) -> bytes:
        """A file of the task folder (a plain file inside it; see ``load_task``)."""
        return read_plain_file(self.root / rel)

    def notes_path(self) -> Path:
        """``notes.md``: maintainers' notes on the method, never the paper."""
        return self.root / "notes.md"


def resolve_tasks_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The tasks folder: the argument, ``$RCB_TASKS_DIR``, ``./tasks`` or the checkout's."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("RCB_TASKS_DIR")
    if env:
        return Path(env)
    here = Path.cwd() / "tasks"
    if here.is_dir():
        return here
    return Path(__file__).resolve().parents[2] / "tasks"


def find_tasks(tasks_dir: Path, pattern: str | None = None) -> list[Path]:
    """Task folders under ``tasks_dir`` (``_``-prefixed folders are shared, not tasks)."""
    if not tasks_dir.is_dir():
        raise TaskError(
            f"{tasks_dir}: no such tasks folder (pass --tasks-dir or set RCB_TASKS_DIR)"
        )
    found = sorted(
        p
        for p in tasks_dir.iterdir()
        if p.is_dir() and not p.name.startswith(("_", ".")) and (p / "task.yaml").is_file()
    )
    if pattern:
        # Several globs may be given separated by commas (task ids never hold one).
        globs = [g.strip() for g in pattern.split(",") if g.strip()]
        found = [p for p in found if any(fnmatch.fnmatchcase(p.name, g) for g in globs)]
    return found


def load_tasks(tasks_dir: Path, pattern: str | None = None) -> list[Task]:
    """Load every task under ``tasks_dir`` whose id matches the glob ``pattern``
    (or any of several comma-separated globs).

    Raises:
        TaskError: on the first malformed task, naming its file and key.
    """
    return [load_task(path) for path in find_tasks(tasks_dir, pattern)]


def load_tasks_of_kind(tasks_dir: Path, pattern: str | None, kind: str) -> list[Task]:
    """The tasks of ``kind`` (``snippet``, ``reproduction``) whose id matches ``pattern``.

    Raises:
        TaskError: on the first malformed task, naming its file and key.
        RcbError: none matches (one line naming ``--tasks``).
    """
    tasks = [t for t in load_tasks(tasks_dir, pattern) if t.config.kind == kind]
    if not tasks:
        raise RcbError(f"--tasks {pattern or '*'}: no {kind} task matches")
    return tasks


def _task_files(root: Path) -> list[str]:
    """The task's files, relative; no link is followed and anything but a file refused.

    Raises:
        TaskError: an entry is a link, FIFO, socket or device.
    """
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if d not in _IGNORED_PARTS]
        for name in filenames:
            path = Path(dirpath, name)
            mode = os.lstat(path).st_mode
            if not stat.S_ISREG(mode):
                raise not_plain(path, mode)
            if name not in _IGNORED_PARTS and not name.endswith(".pyc"):
                out.append(path.relative_to(root).as_posix())
    return sorted(out)


def _check_env(env_dir: Path) -> None:
    """``tasks/_envs/<env>/`` holds plain files and pinned index requirements.

    Raises:
        TaskError: a link or special file (naming it), or ``requirements.txt:line``.
    """
    envs = env_dir.parent
    mode = os.lstat(envs).st_mode
    if not stat.S_ISDIR(mode):
        raise not_plain(envs, mode)
    check_plain_tree(env_dir)
    read_requirements(env_dir / "requirements.txt")


def _read_text(path: Path) -> str:
    """The file's text, read without following a link (see ``read_plain_file``).

    Raises:
        TaskError: not UTF-8 (naming the byte), or not a plain file.
        FileNotFoundError: no such file.
    """
    data = read_plain_file(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TaskError(
            f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def _read_yaml(path: Path) -> dict[str, object]:
    label = str(path)
    try:
        raw = yaml.safe_load(_read_text(path))
    except FileNotFoundError:
        raise TaskError(f"{label}: file not found") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise TaskError(f"{label}{where}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(raw, dict):
        raise TaskError(f"{label}: expected a mapping of keys, got {type(raw).__name__}")
    return raw


def _read_config(root: Path) -> TaskConfig:
    path = root / "task.yaml"
    label = str(path)
    raw = _read_yaml(path)
    try:
        config = TaskConfig.model_validate(raw)
    except ValidationError as exc:
        raise TaskError(format_validation_error(label, exc)) from None
    if config.id != root.name:
        raise TaskError(
            f"{label}: key 'id': '{config.id}' must equal the folder name '{root.name}'"
        )
    return config


def _inside(root: Path, label: str, key: str, rel: str) -> Path:
    """``root / rel`` resolved, which must be a relative path that stays in ``root``."""
    if Path(rel).is_absolute() or rel.startswith(("/", "\\")):
        raise TaskError(f"{label}: key '{key}': path '{rel}' must be relative to the task folder")
    resolved = (root / rel).resolve()
    if not resolved.is_relative_to(root.resolve()):
        raise TaskError(f"{label}: key '{key}': path '{rel}' leaves the task folder")
    return resolved


def _check_paths(root: Path, config: TaskConfig, label: str) -> None:
    """Paths in task.yaml stay in the task folder, and no shown file is a hidden test.

    Raises:
        TaskError: one line naming the key and the path.
    """
    # (what the folder is, its path as written, where it is)
    hidden: list[tuple[str, str, Path]] = [("inputs", INPUTS_DIR, (root / INPUTS_DIR).resolve())]
    for key in ("tests_dir", "cases_dir", "checks_dir"):
        folder = _inside(root, label, key, getattr(config, key))
        # A tests_dir of "." (imported ResearchCodeBench tasks) holds the sources too.
        if folder != root.resolve():
            hidden.append((key, getattr(config, key), folder))
    for key in ("annotated", "context"):
        for rel in getattr(config, key):
            path = _inside(root, label, key, rel)
            for folder_key, written, folder in hidden:
                if path.is_relative_to(folder):
                    raise TaskError(
                        f"{label}: key '{key}': '{rel}' is inside {folder_key} '{written}' "
                        "(tests, cases, checks and inputs are never shown)"
                    )


def load_task(root: Path) -> Task:
    """Load and check one task folder.

    Raises:
        TaskError: one line naming the file and key (or ``file:line``) to fix.
    """
    root = Path(root)
    check_plain_tree(root)
    config = _read_config(root)
    label = str(root / "task.yaml")
    env_dir = root.parent / "_envs" / config.env
    if not (env_dir / "requirements.txt").is_file():
        raise TaskError(f"{label}: key 'env': {env_dir / 'requirements.txt'} not found")
    _check_env(env_dir)
    _check_paths(root, config, label)
    _check_code_origin(root, config, label)
    for key in ("annotated", "context"):
        for rel in getattr(config, key):
            if not (root / rel).is_file():
                raise TaskError(f"{label}: key '{key}': file '{rel}' not found in {root}")
    for rel in config.context:
        # Read now, so a file the prompt cannot show fails here, naming it.
        _read_text(root / rel)
    if config.kind == "snippet":
        if not config.annotated:
            raise TaskError(
                f"{label}: key 'annotated': a snippet task needs at least one annotated file"
            )
        if _grading(root, config, label) == "in-process" and not (root / config.tests_dir).is_dir():
            raise TaskError(
                f"{label}: key 'tests_dir': folder '{config.tests_dir}' not found in {root} "
                f"(or give the task '{config.cases_dir}/' and '{config.checks_dir}/' folders)"
            )
        _check_paper_files(root, config, label)

    expected: ExpectedResults | None = None
    rubric: Rubric | None = None
    if config.kind == "reproduction":
        expected, rubric = _reproduction_files(root, config)
    elif config.reproduction is not None:
        raise TaskError(f"{label}: key 'reproduction': only a reproduction task takes this block")

    files: dict[str, AnnotatedFile] = {}
    snippets: dict[str, Snippet] = {}
    for rel in config.annotated:
        text = _read_text(root / rel)
        try:
            parsed = parse_tags(str(root / rel), text)
        except TagError as exc:
            raise TaskError(str(exc)) from None
        parsed.path = rel
        for snippet in parsed.snippets:
            snippet.path = rel
            if snippet.name in snippets:
                other = snippets[snippet.name]
                raise TaskError(
                    f'{root / rel}:{snippet.start + 1}: duplicate snippet name "{snippet.name}" '
                    f"(first used at {root / other.path}:{other.start + 1})"
                )
            snippets[snippet.name] = snippet
        files[rel] = parsed
    if config.kind == "snippet" and not snippets:
        raise TaskError(
            f"{label}: key 'annotated': no paper2code snippets found in {config.annotated}"
        )
    for name in config.snippets:
        if name not in snippets:
            raise TaskError(
                f"{label}: key 'snippets.{name}': no snippet of that name in the annotated files"
            )

    all_files = _task_files(root)
    digest = hashlib.sha256()
    for rel in all_files:
        if rel in _UNHASHED:
            continue
        digest.update(rel.encode() + b"\0" + read_plain_file(root / rel) + b"\0")
    digest.update(b"env\0" + read_plain_file(env_dir / "requirements.txt"))
    # A reproduction task's folder never enters a sandbox: the agent gets the paper
    # only, and the reference reproduction is the harness's.
    meta = _META_FILES | ({config.paper.file} if config.paper.in_task else set())
    sandbox_files = (
        [rel for rel in all_files if rel not in meta] if config.kind == "snippet" else []
    )
    grading: Literal["cases", "in-process"] = "in-process"
    run_files: list[str] = []
    check_files: list[str] = []
    if config.kind == "snippet" and _grading(root, config, label) == "cases":
        grading = "cases"
        checks_prefix = config.checks_dir.rstrip("/") + "/"
        # inputs/ (builders of the cases' inputs) goes to both sandboxes.
        check_files = [
            rel for rel in sandbox_files if rel.startswith((checks_prefix, f"{INPUTS_DIR}/"))
        ]
        run_files = [rel for rel in sandbox_files if not rel.startswith(checks_prefix)]
        if config.agent is not None:
            for rel in config.agent.checks:
                if not rel.split("::")[0].startswith(checks_prefix):
                    raise TaskError(
                        f"{label}: key 'agent.checks': '{rel}' is not under '{config.checks_dir}/'"
                    )
    elif config.agent is not None:
        raise TaskError(f"{label}: key 'agent': only a task with cases and checks takes it")
    return Task(
        config=config,
        root=root,
        files=files,
        snippets=snippets,
        sha=digest.hexdigest()[:16],
        env_dir=env_dir,
        sandbox_files=sandbox_files,
        expected=expected,
        rubric=rubric,
        grading=grading,
        run_files=run_files,
        check_files=check_files,
    )


def _check_paper_files(root: Path, config: TaskConfig, label: str) -> None:
    """A snippet task's paper files: the vendored full text exists; no ``paper.md``
    (it was renamed ``notes.md``: maintainers' notes, never shown as the paper).

    Raises:
        TaskError: naming the file.
    """
    if (root / "paper.md").exists():
        raise TaskError(
            f"{root / 'paper.md'}: rename it notes.md (maintainers' notes, shown only with "
            "--paper notes); the paper is the arXiv LaTeX or a vendored full text"
        )
    if config.paper.in_task and not (root / config.paper.file).is_file():
        raise TaskError(
            f"{label}: key 'paper.file': {root / config.paper.file} not found "
            f"(the {config.paper.source} full text of the paper)"
        )


def _check_code_origin(root: Path, config: TaskConfig, label: str) -> None:
    """A task built from the authors' code names the repository, the commit and its
    licence, and carries the repository's licence file.

    Raises:
        TaskError: one of them is missing.
    """
    if config.code_commit is None:
        return
    for key in ("code_url", "code_license"):
        if getattr(config, key) is None:
            raise TaskError(f"{label}: key '{key}': a task with 'code_commit' names it too")
    if not any((root / name).is_file() for name in LICENSE_FILES):
        raise TaskError(
            f"{root}: no LICENSE file: copy the licence file of {config.code_url} at "
            f"{config.code_commit[:12]} into the task folder, as it is"
        )


def _grading(root: Path, config: TaskConfig, label: str) -> Literal["cases", "in-process"]:
    """How a snippet task is graded: cases and checks when it has a checks folder.

    Raises:
        TaskError: a checks folder without a cases folder, or snippet selections of
            the other kind.
    """
    if not (root / config.checks_dir).is_dir():
        for name, chosen in config.snippets.items():
            if chosen.checks is not None:
                raise TaskError(
                    f"{label}: key 'snippets.{name}.checks': the task has no "
                    f"'{config.checks_dir}/' folder (in-process tests are selected with 'tests')"
                )
        return "in-process"
    if not (root / config.cases_dir).is_dir():
        raise TaskError(
            f"{label}: key 'cases_dir': folder '{config.cases_dir}' not found in {root} "
            f"(the checks in '{config.checks_dir}/' need cases to check)"
        )
    for name, chosen in config.snippets.items():
        if chosen.tests is not None:
            raise TaskError(
                f"{label}: key 'snippets.{name}.tests': a task with cases and checks selects "
                "'checks', not in-process 'tests'"
            )
    return "cases"


def _read_model(path: Path, schema: type[_Model]) -> _Model:
    try:
        return schema.model_validate(_read_yaml(path))
    except ValidationError as exc:
        raise TaskError(format_validation_error(str(path), exc)) from None


def _reproduction_files(root: Path, config: TaskConfig) -> tuple[ExpectedResults, Rubric]:
    """Check a reproduction task's own files: paper, expectations, rubric, reference.

    Raises:
        TaskError: one line naming the file and key to fix.
    """
    label = str(root / "task.yaml")
    settings = config.reproduction
    if settings is None:
        raise TaskError(f"{label}: missing required key 'reproduction'")
    if (root / "paper.md").exists():
        raise TaskError(
            f"{root / 'paper.md'}: rename it experiment.md (the experiment's specification; the "
            "paper is the arXiv LaTeX or a vendored full text)"
        )
    if not (root / EXPERIMENT_FILE).is_file():
        raise TaskError(
            f"{root / EXPERIMENT_FILE}: file not found (a reproduction task needs it: the "
            "experiment's settings at the task's scale, the seeds, what to report)"
        )
    if config.paper.in_task and not (root / config.paper.file).is_file():
        raise TaskError(f"{label}: key 'paper.file': {root / config.paper.file} not found")
    for number, package in enumerate(settings.packages):
        try:
            pinned_requirement(package)
        except ValueError as exc:
            raise TaskError(f"{label}: key 'reproduction.packages.{number}': {exc}") from None
    expected = _read_model(root / "expected.yaml", ExpectedResults)
    rubric = _read_model(root / "rubric.yaml", Rubric)
    where = root / "expected.yaml"
    for metric in settings.metrics:
        if metric not in expected.metrics:
            raise TaskError(
                f"{where}: key 'metrics': no expectation for '{metric}' (task.yaml asks for it)"
            )
    for metric in expected.metrics:
        if metric not in settings.metrics:
            raise TaskError(
                f"{where}: key 'metrics.{metric}': task.yaml's reproduction.metrics does not ask for it"
            )
    for number, fact in enumerate(expected.curves):
        if fact.curve not in settings.curves:
            raise TaskError(
                f"{where}: key 'curves.{number}.curve': '{fact.curve}' is not in task.yaml's "
                "reproduction.curves"
            )
    for number, pair in enumerate(expected.disjoint_splits):
        for split in pair:
            if split not in settings.splits:
                raise TaskError(
                    f"{where}: key 'disjoint_splits.{number}': '{split}' is not in task.yaml's "
                    "reproduction.splits"
                )
    if expected.held_out is not None:
        if expected.held_out not in settings.splits:
            raise TaskError(
                f"{where}: key 'held_out': '{expected.held_out}' is not in task.yaml's "
                "reproduction.splits"
            )
        for folder in (expected.held_out, f"{expected.held_out}{SWAP_SUFFIX}"):
            if not (root / DATA_DIR / folder).is_dir():
                raise TaskError(
                    f"{where}: key 'held_out': {root / DATA_DIR / folder} not found (the "
                    "held-out data and the files that replace it in the leakage rerun)"
                )
    reference = root / settings.reference
    for name in ("plan.md", "requirements.txt", "reproduce.sh"):
        if not (reference / name).is_file():
            raise TaskError(
                f"{label}: key 'reproduction.reference': {reference / name} not found "
                "(the gold reproduction must pass before the task counts)"
            )
    return expected, rubric
