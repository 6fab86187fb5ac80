"""Append-only JSONL results, safe against crashes, resumable, mergeable across shards."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import PydanticSerializationError

from rcb_action.errors import RcbError
from rcb_action.text import utf8_safe_data

RESULTS_FILE = "results.jsonl"

# (task, snippet, model, sample, paper condition, agent turns)
RecordKey = tuple[str, str, str, int, str, int]
# What the prompt carried: the paper, nothing (the ablation), or the task's notes
# instead of the paper. Results written before notes existed hold ``true``/``false``.
PaperCondition = Literal["with", "without", "notes"]


class Record(BaseModel):
    """One attempt: a model's answer for one snippet, one sample, scored."""

    model_config = ConfigDict(extra="allow")

    task: str
    snippet: str
    model: str
    sample: int = 0
    paper: PaperCondition = "with"
    agent_turns: int = 0
    task_sha: str
    prompt_sha: str
    weight: int
    published: dt.date
    domain: str = "ml"
    status: Literal["pass", "fail", "harness_error", "skipped"]
    # How the verdict was reached: "cases" (the model's code and the checks ran in
    # separate sandboxes) or "in-process" (pytest imported the model's code: forgeable).
    grading: Literal["cases", "in-process"] = "in-process"
    failure_class: str | None = None
    message: str = ""
    tests_expected: int = 0
    tests_ran: int = 0
    tests_passed: int = 0
    completion: str = ""
    code: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    duration_model_s: float = 0.0
    duration_test_s: float = 0.0
    paper_truncated: bool = False
    paper_chars_kept: int | None = None
    # sha256 of the paper text (or notes) this condition gives, when known; None for
    # "without", and for a model that does not read the prompt when the text was not at hand.
    paper_sha: str | None = None
    # Prompt tokens served from the provider's prompt cache, and the cost that saved.
    tokens_cached: int = 0
    cost_saved_usd: float = 0.0
    log_dir: str | None = None
    created_at: str = ""
    rcb_version: str = ""

    @field_validator("paper", mode="before")
    @classmethod
    def _old_flag(cls, value: object) -> object:
        """``paper: true/false`` (results written before notes existed) mean with and without."""
        if isinstance(value, bool):
            return "with" if value else "without"
        return value

    @property
    def with_paper(self) -> bool:
        """The prompt carried the paper itself (the headline condition)."""
        return self.paper == "with"

    @property
    def key(self) -> RecordKey:
        return (self.task, self.snippet, self.model, self.sample, self.paper, self.agent_turns)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def scored(self) -> bool:
        """Counts in the metrics: harness errors and skips never count against a model."""
        return self.status in ("pass", "fail")


ModelT = TypeVar("ModelT", bound=BaseModel)


def json_line(record: BaseModel) -> str:
    """``record`` as one line of JSON, newline included.

    Never fails on text: a string holding a lone surrogate (which UTF-8 cannot
    encode) is written with U+FFFD in its place (:func:`rcb_action.text.utf8_safe`).
    """
    try:
        return record.model_dump_json() + "\n"
    except PydanticSerializationError:
        clean = type(record).model_validate(utf8_safe_data(record.model_dump()))
        return clean.model_dump_json() + "\n"


def read_jsonl(path: Path, model: type[ModelT], what: str = "record") -> list[ModelT]:
    """Every well-formed line of an append-only JSONL file as ``model``, in file order
    (none when the file is absent).

    A torn last line (a crash mid-write) is ignored; any other malformed line is
    reported on stderr and skipped.
    """
    if not path.is_file():
        return []
    found: list[ModelT] = []
    lines = path.read_bytes().split(b"\n")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            found.append(model.model_validate_json(raw))
        except ValidationError:
            if number != len(lines):  # not the torn tail
                print(f"rcb: {path}:{number}: skipping a malformed {what}", file=sys.stderr)
    return found


def read_records(path: Path) -> list[Record]:
    """Every well-formed record of a results file, in file order (see :func:`read_jsonl`)."""
    return read_jsonl(path, Record)


def latest_records(records: Iterable[Record]) -> dict[RecordKey, Record]:
    """The newest record for each key, in file order (a later line supersedes)."""
    latest: dict[RecordKey, Record] = {}
    for record in records:
        latest[record.key] = record
    return latest


class JsonlStore(Generic[ModelT]):
    """``DIR/NAME``, an append-only JSONL file of ``model`` records: each is written,
    flushed and fsynced on its own.

    Opening the store repairs a torn last line left by a crash, so every later record
    starts on a line of its own. A kind of record is a subclass that names its model,
    its file and what a record is called (for the warning about a malformed line); it
    adds its own reading of the records (``latest``) and overrides nothing.
    """

    model: type[ModelT]
    file_name: str
    what = "record"

    def __init__(self, directory: Path, name: str | None = None) -> None:
        self.dir = Path(directory)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RcbError(
                f"--out {directory}: cannot create the results folder ({exc.strerror})"
            ) from None
        self.path = self.dir / (name or self.file_name)
        self._lock = threading.Lock()
        self._repair_tail()

    def _repair_tail(self) -> None:
        if not self.path.is_file():
            return
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as handle:
                handle.truncate(keep)
                handle.flush()
                os.fsync(handle.fileno())

    def records(self) -> list[ModelT]:
        """Every well-formed record, in file order (see :func:`read_jsonl`)."""
        return read_jsonl(self.path, self.model, self.what)

    def append(self, record: ModelT) -> None:
        """Write ``record`` as one line, flushed and fsynced (see :func:`json_line`)."""
        line = json_line(record)
        with self._lock, open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


class ResultStore(JsonlStore[Record]):
    """``DIR/results.jsonl``: one record per attempt, resumable, mergeable across shards."""

    model = Record
    file_name = RESULTS_FILE

    def latest(self) -> dict[RecordKey, Record]:
        """The newest record for each key (a rerun of a changed task appends a newer one)."""
        return latest_records(self.records())


def combine_records(groups: Iterable[Iterable[Record]]) -> dict[RecordKey, Record]:
    """One record per key from several runs' records (each group in file order).

    Within a group the newest line for a key wins (a rerun appends); across groups
    a scored record beats a harness error, then the newer one wins.
    """
    chosen: dict[RecordKey, Record] = {}
    for group in groups:
        for key, record in latest_records(group).items():
            current = chosen.get(key)
            if current is None or (record.scored, record.created_at) >= (
                current.scored,
                current.created_at,
            ):
                chosen[key] = record
    return chosen


def _log_folder(record: Record, where: Path) -> str | None:
    """The folder under ``logs/`` that holds ``record``'s attempt logs (its model's).

    Raises:
        RcbError: the record's ``log_dir`` leaves the results folder.
    """
    if not record.log_dir:
        return None
    parts = Path(record.log_dir).parts
    if Path(record.log_dir).is_absolute() or ".." in parts or len(parts) < 2 or parts[0] != "logs":
        raise RcbError(
            f"{where}: a record of {record.task} / {record.snippet} has log_dir "
            f"{record.log_dir[:80]!r}, not a folder under logs/ (was the file edited?)"
        )
    return parts[1]


def _copy_logs(source: Path, target: Path) -> None:
    """Copy the folder ``source`` into ``target``: plain files and folders only (a
    symbolic link is never followed: a results folder is not trusted to point inside)."""
    target.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(source):
        if entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            _copy_logs(Path(entry.path), target / entry.name)
        elif entry.is_file(follow_symlinks=False):
            shutil.copyfile(entry.path, target / entry.name, follow_symlinks=False)


def merge_stores(sources: Iterable[Path], out: Path) -> int:
    """Join the results of several runs (shards) into ``out``; returns the record count.

    For a key present in several sources, a scored record beats a harness error,
    then the newer one wins. The output is sorted by key, so merging is
    deterministic whatever the order of the sources. The attempt logs of the records
    kept (each record's ``log_dir``) are copied along, so old folders keep working.

    Each model's logs live in a folder of their own under ``logs/``. Results made
    before folder names carried a hash of the model name may put two models in one
    folder (``acme/coder`` and ``acme_coder``); such a merge is refused rather than
    letting one model's logs replace the other's.

    Raises:
        RcbError: a source folder has no results file, a record's ``log_dir`` leaves
            its folder, or two different models keep their logs in one folder (in the
            sources, or in what ``out`` already holds).
    """
    from rcb_action.names import path_key, shown

    out = Path(out)
    sources = [Path(s) for s in sources]
    groups: list[list[Record]] = []
    origin: dict[int, Path] = {}
    for source in sources:
        path = source / RESULTS_FILE
        if not path.is_file():
            raise RcbError(
                f"{source}: no {RESULTS_FILE} here (is it an --out folder of rcb evaluate?)"
            )
        records = read_records(path)
        groups.append(records)
        origin.update((id(record), source) for record in records)
    # Logs already in --out stay: no source may write into another model's folder.
    out_is_source = out.resolve() in {s.resolve() for s in sources}
    kept = [] if out_is_source else read_records(out / RESULTS_FILE)
    owners: dict[str, tuple[str, Path]] = {}
    everything = [(out, r) for r in kept] + [(origin[id(r)], r) for g in groups for r in g]
    keys = {model: path_key(model) for model in {r.model for _, r in everything}}
    for where, record in everything:
        folders = {keys[record.model], _log_folder(record, where / RESULTS_FILE)}
        for folder in sorted(f for f in folders if f is not None):
            owner, seen_in = owners.setdefault(folder, (record.model, where))
            if owner != record.model:
                raise RcbError(
                    f"{where}: models {shown(owner)} (in {seen_in}) and {shown(record.model)} "
                    f"both keep their logs in logs/{folder}: merging would mix their logs "
                    "(results from an older rcb; rerun one of them into a new folder)"
                )

    chosen = combine_records(groups)
    out.mkdir(parents=True, exist_ok=True)
    for record in chosen.values():
        source = origin[id(record)]
        if not record.log_dir or source.resolve() == out.resolve():
            continue
        logs = source / record.log_dir
        if logs.is_dir() and logs.resolve().is_relative_to(source.resolve()):
            _copy_logs(logs, out / record.log_dir)
    staging = out / f".{RESULTS_FILE}.tmp"
    with open(staging, "w", encoding="utf-8") as handle:
        for key in sorted(chosen):
            handle.write(json_line(chosen[key]))
        handle.flush()
        os.fsync(handle.fileno())
    staging.replace(out / RESULTS_FILE)
    return len(chosen)
