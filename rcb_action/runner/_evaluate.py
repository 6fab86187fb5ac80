"""``rcb evaluate``: every (model, task, snippet, sample, paper) attempt, resumable.

Work flows one way: build the prompt, ask the model, splice the answer, run the
tests in a sandbox, score, append one record. A rerun skips every attempt whose
record exists with the same task and prompt hashes (and is not a harness error);
nothing else is redone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import signal
import sys
import threading
import time
import zlib
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any, Literal

from rcb_action import __version__
from rcb_action.agent import feedback, refine_prompt, visible_passed
from rcb_action.errors import RcbError
from rcb_action.models import (
    CompletionRequest,
    LiteLLMModel,
    Model,
    ModelCallError,
    get_model,
    load_registry,
)
from rcb_action.names import path_key
from rcb_action.papers import (
    NoLatexSource,
    Paper,
    PaperUnavailable,
    base_url,
    notes_for,
    paper_for,
    pinned_name,
)
from rcb_action.prompts import Prompt, build_prompt
from rcb_action.results import Record, RecordKey, ResultStore, latest_records
from rcb_action.runner._batch import BatchRun, check_batch_model, custom_id
from rcb_action.runner._progress import RunProgress
from rcb_action.sandbox import EnvironmentBuildError, Limits, SandboxBackend, get_backend
from rcb_action.scoring import (
    Expected,
    Sandboxes,
    SandboxStartError,
    Scored,
    TestRun,
    open_sandboxes,
    reference_run,
    release_sandboxes,
    run_visible,
    score_snippet,
    selection_key,
)
from rcb_action.splice import extract_code, no_code_reason
from rcb_action.tasks import Task, load_tasks_of_kind, resolve_tasks_dir
from rcb_action.text import utf8_safe

HARNESS_RETRIES = 2
# What a call stage returns when --max-cost was reached before its call started.
_CAPPED = "not started: --max-cost reached"
# ``both`` is with and without (the ablation); ``notes`` gives the task's notes.md
# instead of the paper, a condition recorded and reported apart.
PaperMode = Literal["with", "without", "both", "notes"]
_MODES: dict[str, list[Literal["with", "without", "notes"]]] = {
    "with": ["with"],
    "without": ["without"],
    "both": ["with", "without"],
    "notes": ["notes"],
}


# The defaults of ``rcb evaluate`` and the Action: model calls in flight per model, and
# test runs in flight (the CPU count, at most 8).
DEFAULT_CONCURRENCY = 16


def default_workers() -> int:
    return min(os.cpu_count() or 1, 8)


@dataclass
class EvalConfig:
    """Everything ``rcb evaluate`` takes."""

    models: list[str]
    out: Path = Path("results")
    tasks_dir: Path | None = None
    tasks: str | None = None
    samples: int = 1
    paper: PaperMode = "with"
    workers: int = 1
    sandbox: str = "local"
    shard: tuple[int, int] | None = None
    registry_files: list[Path] = field(default_factory=list)
    progress: bool = True
    limits: Limits = field(default_factory=Limits)
    # Agent mode: up to this many rewrites after running the visible tests (0: off).
    agent_turns: int = 0
    # Model calls in flight at once, per model (test runs in flight are ``workers``).
    concurrency: int = DEFAULT_CONCURRENCY
    # Stop starting model calls once the dollars recorded for the run's models reach this.
    max_cost_usd: float | None = None
    # Send each provider model's prompts through its batch API, polling every batch_poll_s.
    batch: bool = False
    batch_poll_s: float = 30.0


@dataclass
class WorkItem:
    model: Model
    task: Task
    snippet: str
    sample: int
    paper: Literal["with", "without", "notes"]
    prompt: Prompt
    agent_turns: int = 0
    # sha256 of the paper text (or notes) of this condition when known; set for every
    # model that reads the prompt, and for the others when known without the network.
    paper_sha: str | None = None

    @property
    def key(self) -> RecordKey:
        return (
            self.task.id,
            self.snippet,
            self.model.name,
            self.sample,
            self.paper,
            self.agent_turns,
        )


@dataclass
class EvalSummary:
    """What a run did: attempts made and skipped, and whether it was interrupted."""

    out: Path
    planned: int
    skipped: int
    done: int
    interrupted: bool = False
    models: list[str] = field(default_factory=list)
    # Papers whose environment could not be built: task id -> the reason recorded.
    skipped_papers: dict[str, str] = field(default_factory=dict)
    # Wall-clock seconds of the whole run, and of it building environments.
    seconds: float = 0.0
    env_seconds: float = 0.0
    # Attempts not started because --max-cost was reached.
    not_started: int = 0


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` with 1 <= I <= N.

    Raises:
        RcbError: malformed.
    """
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise RcbError(f"--shard {text}: write it as I/N with 1 <= I <= N, e.g. 2/4")
    return int(match[1]), int(match[2])


def in_shard(task_id: str, snippet: str, shard: tuple[int, int] | None) -> bool:
    """Deterministic split by snippet: the same snippet lands in the same shard for every model."""
    if shard is None:
        return True
    index, count = shard
    return zlib.crc32(f"{task_id}\0{snippet}".encode()) % count == index - 1


def _safe(name: str) -> str:
    """A folder name for a model or snippet name that no other name gets (a readable
    prefix and a hash of the exact name): ``acme/coder`` and ``acme_coder`` never
    share logs. Older results keep the folder their records name in ``log_dir``."""
    return path_key(name)


class _Runner:
    def __init__(self, config: EvalConfig, store: ResultStore) -> None:
        self.config = config
        self.store = store
        self.stop = threading.Event()
        self._backend: SandboxBackend | None = None
        self._backend_lock = threading.Lock()
        self._sandboxes: dict[str, Sandboxes] = {}
        self._pending: dict[str, int] = defaultdict(int)
        self._task_locks: dict[str, threading.Lock] = defaultdict(threading.Lock)
        self._expected: dict[str, Expected] = {}
        self.done: dict[RecordKey, Record] = {}
        # Dollars spent on the run's models: those recorded in the results folder by
        # earlier runs, and every answer of this run as it arrives.
        self.cost_usd = 0.0
        self._cost_lock = threading.Lock()

    def spent(self, usd: float) -> None:
        with self._cost_lock:
            self.cost_usd += usd

    def over_budget(self) -> bool:
        """Whether ``--max-cost`` is reached: no new model call may start."""
        cap = self.config.max_cost_usd
        return cap is not None and self.cost_usd >= cap

    # sandbox lifecycle: one warm set of sandboxes per task, released when its last item is done
    def backend(self) -> SandboxBackend:
        with self._backend_lock:
            if self._backend is None:
                self._backend = get_backend(self.config.sandbox, self.config.limits)
            return self._backend

    def sandbox_for(self, task: Task) -> tuple[Sandboxes, Expected]:
        with self._task_locks[task.id]:
            if task.id not in self._sandboxes:
                self._sandboxes[task.id] = open_sandboxes(self.backend(), task)
            sandboxes = self._sandboxes[task.id]
            if task.id not in self._expected:
                self._expected[task.id] = reference_run(task, sandboxes)
            return sandboxes, self._expected[task.id]

    def item_done(self, task: Task) -> None:
        with self._task_locks[task.id]:
            self._pending[task.id] -= 1
            if self._pending[task.id] == 0 and task.id in self._sandboxes:
                release_sandboxes(self.backend(), self._sandboxes.pop(task.id))

    def close(self) -> None:
        with self._backend_lock:
            if self._backend is not None:
                self._backend.close()

    # one attempt
    def record(self, item: WorkItem, **fields: object) -> Record:
        task = item.task
        return Record(
            task=task.id,
            snippet=item.snippet,
            model=item.model.name,
            sample=item.sample,
            paper=item.paper,
            agent_turns=item.agent_turns,
            task_sha=task.sha,
            prompt_sha=item.prompt.sha,
            paper_sha=item.paper_sha,
            weight=task.weight(item.snippet),
            published=task.config.published,
            grading=task.grading,
            domain=task.config.domain,
            paper_truncated=item.prompt.paper_truncated,
            paper_chars_kept=(
                item.prompt.paper_chars_kept if item.prompt.paper or item.prompt.notes else None
            ),
            created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            rcb_version=__version__,
            **fields,  # type: ignore[arg-type]
        )

    def answer(self, item: WorkItem) -> Record | dict[str, Any]:
        """The first half of an attempt, the model's: its answer and usage (the fields
        :meth:`scored` takes), or the attempt's final record when there is nothing to
        test (a task skipped on this machine, a provider that failed after retries)."""
        task = item.task
        skip = self.backend().skip_reason(task)
        if skip:
            return self.record(item, status="skipped", message=skip)
        request = CompletionRequest(
            task=task, snippet=item.snippet, sample=item.sample, prompt=item.prompt
        )
        started = time.monotonic()
        try:
            completion = item.model.complete(request)
        except ModelCallError as exc:
            return self.harness_error(item, str(exc))
        self.spent(completion.cost_usd)
        return {
            "completion": completion.text,
            "tokens_in": completion.tokens_in,
            "tokens_out": completion.tokens_out,
            "cost_usd": completion.cost_usd,
            "duration_model_s": round(completion.latency_s or time.monotonic() - started, 3),
            "tokens_cached": completion.tokens_cached,
            "cost_saved_usd": completion.cost_saved_usd,
        }

    def attempt(self, item: WorkItem) -> Record | None:
        """One attempt, answer and test in the calling thread. None when interrupted."""
        answered = self.answer(item)
        if isinstance(answered, Record):
            return answered
        return self.scored(item, answered)

    def harness_error(self, item: WorkItem, message: str) -> Record:
        return self.record(
            item, status="harness_error", failure_class="harness_error", message=message[:500]
        )

    def scored(self, item: WorkItem, fields: dict[str, Any]) -> Record | None:
        """The record of an answer (``fields`` holds its completion and usage): its code
        spliced and tested. None when interrupted."""
        task = item.task
        code = extract_code(fields["completion"])
        if code is None:
            return self.record(
                item,
                status="fail",
                failure_class="no_code",
                message=no_code_reason(fields["completion"]),
                **fields,
            )
        log_dir = self.log_dir(item)
        self.write_log(log_dir, {"completion.md": fields["completion"]})
        scored = self.score(item, code)
        if scored is None:
            return None
        run = scored.run
        self.write_log(
            log_dir, {Path(task.snippets[item.snippet].path).name: scored.spliced, **scored.logs}
        )
        return self.record(
            item,
            status=run.status,
            failure_class=run.failure_class,
            message=run.message,
            tests_expected=run.tests_expected,
            tests_ran=run.tests_ran,
            tests_passed=run.tests_passed,
            duration_test_s=round(run.duration_s, 3),
            code=code,
            log_dir=str(log_dir.relative_to(self.config.out)),
            **fields,
        )

    def attempts(self, item: WorkItem) -> list[Record] | None:
        """The records of one work item: one, or in agent mode the first answer's
        (unless already recorded) and the refined one's. None when interrupted."""
        if item.agent_turns == 0:
            record = self.attempt(item)
            return None if record is None else [record]
        return self.refine(item)

    def refine(self, item: WorkItem) -> list[Record] | None:
        """Agent mode: the first answer, then up to ``agent_turns`` rewrites, each after
        the visible checks ran on the last one; the final block is scored as usual.

        Only the visible checks (task.yaml ``agent``) ever run for feedback, in a check
        sandbox that holds no hidden check. A task with in-process tests, or with no
        visible checks, gives no feedback: its refined record is the first answer's."""
        first_item = dataclasses.replace(item, agent_turns=0)
        first = self.done.get(first_item.key)
        new: list[Record] = []
        if first is None or not is_done(first_item, self.done):
            first = self.attempt(first_item)
            if first is None:
                return None
            new.append(first)
        if not first.scored:  # a skip stays a skip; a harness error reruns next time
            return new if first.status == "harness_error" else [*new, self.copy(first, item)]
        task = item.task
        fields: dict[str, Any] = {
            "completion": first.completion,
            "tokens_in": first.tokens_in,
            "tokens_out": first.tokens_out,
            "cost_usd": first.cost_usd,
            "duration_model_s": first.duration_model_s,
        }
        code, history = first.code, []
        visible: list[str] = []
        try:
            sandboxes, expected = self.sandbox_for(task)
            ids = expected.ids.get(selection_key(task.tests_for(item.snippet)))
            if ids is None:
                return [
                    *new,
                    self.harness_error(item, "task invalid: the reference fails its tests"),
                ]
            visible = expected.visible_ids if task.grading == "cases" else []
            for turn in range(1, item.agent_turns + 1 if visible else 1):
                if self.stop.is_set():
                    return None
                result = (
                    None
                    if code is None
                    else run_visible(sandboxes, task, item.snippet, code, expected)
                )
                if visible_passed(result):
                    break
                history.append((fields["completion"], feedback(result, visible)))
                answer = item.model.complete(
                    CompletionRequest(
                        task=task,
                        snippet=item.snippet,
                        sample=item.sample,
                        prompt=refine_prompt(item.prompt, history),
                    )
                )
                self.spent(answer.cost_usd)
                code = extract_code(answer.text)
                fields["completion"] = answer.text
                fields["tokens_in"] += answer.tokens_in
                fields["tokens_out"] += answer.tokens_out
                fields["cost_usd"] += answer.cost_usd
                fields["duration_model_s"] += round(answer.latency_s, 3)
                self.write_log(
                    self.log_dir(item),
                    {
                        f"turn-{turn}-feedback.md": history[-1][1],
                        f"turn-{turn}-completion.md": answer.text,
                    },
                )
        except (ModelCallError, SandboxStartError, OSError) as exc:
            # Infrastructure: this attempt reruns next time.
            return [*new, self.harness_error(item, f"agent mode: {type(exc).__name__}: {exc}")]
        extra = {
            "turns_used": len(history),
            "visible_tests": len(visible),
            "first_status": first.status,
        }
        if code == first.code:
            return [*new, self.copy(first, item, **fields, **extra)]
        final = self.scored(item, {**fields, **extra})
        return None if final is None else [*new, final]

    def copy(self, record: Record, item: WorkItem, **fields: Any) -> Record:
        """``record`` (the first answer's) as the record of ``item``."""
        update = {
            "agent_turns": item.agent_turns,
            "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            **fields,
        }
        return record.model_copy(update=update)

    def score(self, item: WorkItem, code: str) -> Scored | None:
        """Splice and grade, retrying infrastructure failures; None when interrupted."""
        task = item.task
        key = selection_key(task.tests_for(item.snippet))
        last_error = ""
        for _ in range(1 + HARNESS_RETRIES):
            if self.stop.is_set():
                return None
            try:
                sandboxes, expected = self.sandbox_for(task)
                if key in expected.errors:
                    return Scored(
                        "",
                        TestRun(
                            status="harness_error",
                            failure_class="harness_error",
                            message=f"task invalid: the reference fails its own tests ({expected.errors[key]})"[
                                :500
                            ],
                        ),
                    )
                return score_snippet(sandboxes, task, item.snippet, code, expected)
            except RcbError:
                raise
            except Exception as exc:  # infrastructure: retried, then reported apart
                if self.stop.is_set():
                    return None
                last_error = f"{type(exc).__name__}: {exc}"
        return Scored(
            "",
            TestRun(
                status="harness_error", failure_class="harness_error", message=last_error[:500]
            ),
        )

    def log_dir(self, item: WorkItem) -> Path:
        flag = {"with": "", "without": "-nopaper", "notes": "-notes"}[item.paper] + (
            f"-k{item.agent_turns}" if item.agent_turns else ""
        )
        return (
            self.config.out / "logs" / _safe(item.model.name) / item.task.id / _safe(item.snippet)
            / f"s{item.sample}{flag}"
        )  # fmt: skip

    @staticmethod
    def write_log(directory: Path, files: dict[str, str]) -> None:
        """Write each non-empty text as UTF-8; lone surrogates become U+FFFD
        (:func:`rcb_action.text.utf8_safe`), so no text can fail the write."""
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            if text:
                (directory / name).write_text(utf8_safe(text), encoding="utf-8")


def plan(
    config: EvalConfig,
    models: list[Model],
    tasks: list[Task],
    texts: dict[tuple[str, str], Paper] | None = None,
) -> list[WorkItem]:
    """Every attempt of the run (this shard's), in a stable order.

    ``texts`` holds the paper (``"with"``) or notes (``"notes"``) of each task by
    ``(task id, mode)``, resolved beforehand (see :func:`texts_needed`); a model that
    reads the prompt gets it, one that does not (``reference``, ``null``, ``replay:``)
    gets the prompt without it, so its resume key never depends on the text.
    """
    texts = texts or {}
    items = []
    for task in tasks:
        for snippet in task.snippet_names():
            if not in_shard(task.id, snippet, config.shard):
                continue
            for model in models:
                for mode in _MODES[config.paper]:
                    text = texts.get((task.id, mode))
                    if model.reads_prompt:
                        prompt = build_prompt(
                            task,
                            snippet,
                            paper=mode,
                            context_window=model.context_window,
                            text=text,
                        )
                    else:
                        prompt = build_prompt(task, snippet, paper="without")
                    sha = text.sha if text is not None and mode != "without" else None
                    for sample in range(config.samples):
                        items.append(
                            WorkItem(
                                model, task, snippet, sample, mode, prompt, config.agent_turns, sha
                            )
                        )
    return items


def texts_needed(
    config: EvalConfig, models: list[Model], tasks: list[Task]
) -> dict[tuple[str, str], Paper]:
    """The paper (or notes) of every task the run gives a text to, by ``(task id, mode)``.

    When a model reads the prompt, the text must be had: from the task (vendored,
    notes.md), the cache, or arXiv once. When no model does, only what is known
    without the network is looked up (for ``paper_sha``); nothing is fetched.

    Raises:
        PaperUnavailable: a text a reading model needs cannot be had (one line naming
            the task and the fix); nothing has run.
    """
    readers = any(model.reads_prompt for model in models)
    texts: dict[tuple[str, str], Paper] = {}
    for mode in _MODES[config.paper]:
        if mode == "without":
            continue
        for task in tasks:
            if mode == "notes":
                if readers or task.notes_path().is_file():
                    texts[(task.id, mode)] = notes_for(task)
                continue
            if readers:
                try:
                    texts[(task.id, mode)] = paper_for(task, fetch=False)
                except NoLatexSource:
                    raise
                except PaperUnavailable:
                    if config.progress:
                        print(
                            f"rcb: fetching the paper of task {task.id} "
                            f"({pinned_name(task)}) from {base_url()}",
                            file=sys.stderr,
                        )
                    texts[(task.id, mode)] = paper_for(task)
            else:
                try:
                    found = paper_for(task, fetch=False)
                except RcbError:
                    continue
                texts[(task.id, mode)] = found
    return texts


def is_done(
    item: WorkItem, done: dict[RecordKey, Record], skips: dict[str, str | None] | None = None
) -> bool:
    """Scored with the same task and prompt; or skipped for a reason that still holds
    (``skips``: each task's skip reason now), so a rerun neither repeats nor re-records it."""
    record = done.get(item.key)
    if record is None or record.task_sha != item.task.sha or record.prompt_sha != item.prompt.sha:
        return False
    if record.status == "skipped":
        return skips is not None and skips.get(item.task.id) == record.message
    return record.status in ("pass", "fail")


def _skip_reasons(config: EvalConfig, tasks: list[Task]) -> dict[str, str | None]:
    """Each task's skip reason on this machine (a task that needs a GPU, and there is none)."""
    backend = get_backend(config.sandbox, config.limits)
    try:
        return {task.id: backend.skip_reason(task) for task in tasks}
    finally:
        backend.close()


@contextmanager
def _interrupts_as_keyboard() -> Iterator[None]:
    """SIGTERM (a cancelled CI job) takes the same clean path as Ctrl-C."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = (
        signal.signal(signal.SIGTERM, handler)
        if threading.current_thread() is threading.main_thread()
        else None
    )
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def evaluate(config: EvalConfig, *, model_objects: list[Model] | None = None) -> EvalSummary:
    """Run an evaluation; see :class:`EvalConfig`.

    Args:
        config: what to run.
        model_objects: ready-made models (tests pass litellm models with mock
            responses); by default they are made from ``config.models``.

    Raises:
        RcbError: a usage or input problem (bad task, unknown model, missing key).
        KeyboardInterrupt: Ctrl-C or SIGTERM, after everything is cleaned up;
            every finished attempt is already on disk.
    """
    prepared = prepare(config, model_objects=model_objects)
    items, todo, store = prepared.items, prepared.todo, prepared.store
    for model in {item.model.name: item.model for item in todo}.values():
        model.check()
    summary = EvalSummary(
        out=config.out,
        planned=len(items),
        skipped=len(items) - len(todo),
        done=0,
        models=[m.name for m in prepared.models],
    )
    if not todo:
        print(
            f"rcb: nothing to do: all {len(items)} attempts already in {store.path}",
            file=sys.stderr,
        )
        return summary
    print(
        f"rcb: {len(todo)} attempts to run ({summary.skipped} already done) with "
        f"{config.workers} test worker(s) and up to {config.concurrency} model call(s) in "
        f"flight per model, sandbox {config.sandbox}; results in {store.path}",
        file=sys.stderr,
    )
    started = time.monotonic()
    runner = _Runner(config, store)
    runner.done = prepared.done
    runner.cost_usd = prepared.recorded_cost_usd
    if runner.over_budget():
        print(
            f"rcb: --max-cost {config.max_cost_usd:g} already reached: "
            f"${runner.cost_usd:.2f} is recorded for these models in {store.path}; "
            "no model call will start (raise --max-cost to go on)",
            file=sys.stderr,
        )
    todo = _skip_unbuildable(runner, todo, summary)
    summary.env_seconds = time.monotonic() - started
    if todo:
        for item in todo:
            runner._pending[item.task.id] += 1
        answered = _batch_answers(runner, todo) if config.batch else {}
        _run_pool(runner, in_lanes(todo, config.workers), summary, answered)
    else:
        runner.close()
    summary.seconds = time.monotonic() - started
    if summary.not_started:
        print(
            f"rcb: --max-cost {config.max_cost_usd:g} reached (${runner.cost_usd:.2f} recorded): "
            f"{summary.not_started} attempt(s) not started; run again with a higher "
            "--max-cost to resume",
            file=sys.stderr,
        )
    return summary


def in_lanes(todo: list[WorkItem], lanes: int) -> list[WorkItem]:
    """``todo`` reordered so that ``lanes`` tasks run side by side: each task goes whole
    to the lane with the fewest attempts so far, and the lanes are interleaved.

    In plan order, the test workers all start on one task, and every one but the first
    waits while the first runs the task's reference (once per task, then cached); in
    lanes, each worker starts a task of its own, so the reference runs overlap. About
    ``lanes`` tasks hold sandboxes at a time, as before about one did."""
    if lanes <= 1:
        return todo
    by_task: dict[str, list[WorkItem]] = defaultdict(list)
    for item in todo:
        by_task[item.task.id].append(item)
    queues: list[list[WorkItem]] = [[] for _ in range(lanes)]
    for items in by_task.values():
        min(queues, key=len).extend(items)
    return [item for row in zip_longest(*queues) for item in row if item is not None]


@dataclass
class Prepared:
    """A run planned but not started: its models, every attempt, those still to do."""

    models: list[Model]
    items: list[WorkItem]
    todo: list[WorkItem]
    store: ResultStore
    done: dict[RecordKey, Record]
    recorded_cost_usd: float


def prepare(config: EvalConfig, *, model_objects: list[Model] | None = None) -> Prepared:
    """Check the configuration, load tasks and models, resolve the papers the prompts
    need and plan every attempt; nothing is called or run.

    Raises:
        RcbError: a usage or input problem (bad task, unknown model, a paper that
            cannot be had).
    """
    if config.samples < 1:
        raise RcbError("--samples must be at least 1")
    if config.workers < 1:
        raise RcbError("--workers must be at least 1")
    if config.concurrency < 1:
        raise RcbError("--concurrency must be at least 1")
    if config.max_cost_usd is not None and config.max_cost_usd < 0:
        raise RcbError("--max-cost must be 0 or more (US dollars)")
    if config.agent_turns < 0:
        raise RcbError("--agent-turns must be 0 or more")
    if config.batch and config.agent_turns:
        raise RcbError(
            "--batch with --agent-turns: agent mode answers after feedback, one call at a "
            "time; run it without --batch"
        )
    registry = load_registry(config.registry_files)
    tasks = load_tasks_of_kind(resolve_tasks_dir(config.tasks_dir), config.tasks, "snippet")
    models = model_objects or [
        get_model(spec, registry, max_concurrency=config.concurrency) for spec in config.models
    ]
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise RcbError(f"--model: the same model is given twice ({', '.join(names)})")
    if config.batch:
        for model in models:
            check_batch_model(model)
    texts = texts_needed(config, models, tasks)
    store = ResultStore(config.out)
    items = plan(config, models, tasks, texts)
    for item in items:
        item.model.check_prompt(item.task.id, item.snippet, item.sample, item.prompt)
    records = store.records()
    done = latest_records(records)
    skips = (
        _skip_reasons(config, tasks) if any(r.status == "skipped" for r in done.values()) else None
    )
    todo = [item for item in items if not is_done(item, done, skips)]
    wanted = set(names)
    recorded = sum(r.cost_usd or 0.0 for r in records if r.model in wanted)
    return Prepared(models, items, todo, store, done, recorded)


def _skip_unbuildable(
    runner: _Runner, todo: list[WorkItem], summary: EvalSummary
) -> list[WorkItem]:
    """Build every task's environment first (cached, so the attempts reuse it). A task
    whose environment cannot be built has its attempts recorded as skipped, with the
    reason, and the rest of the run goes on; the papers skipped are named on stderr.

    Raises:
        KeyboardInterrupt: after the sandboxes are cleaned up.
    """
    tasks = {item.task.id: item.task for item in todo}

    def build(task: Task) -> str | None:
        backend = runner.backend()
        if backend.skip_reason(task):
            return None  # skipped with that reason by the attempt itself
        try:
            backend.prepare(task)
        except EnvironmentBuildError as exc:
            return f"skipped: task {task.id}: its environment could not be built: {exc}"
        return None

    try:
        with ThreadPoolExecutor(max_workers=runner.config.workers) as pool:
            reasons = dict(zip(tasks, pool.map(build, tasks.values()), strict=True))
    except BaseException:
        runner.close()
        raise
    broken = {task_id: reason for task_id, reason in reasons.items() if reason}
    if not broken:
        return todo
    for item in todo:
        if item.task.id in broken:
            runner.store.append(
                runner.record(item, status="skipped", message=broken[item.task.id][:500])
            )
    summary.skipped_papers = broken
    print(
        f"rcb: {len(broken)} paper(s) skipped, their environment could not be built: "
        + "; ".join(f"{task_id} ({reason})" for task_id, reason in sorted(broken.items())),
        file=sys.stderr,
    )
    return [item for item in todo if item.task.id not in broken]


def _batch_answers(
    runner: _Runner, todo: list[WorkItem]
) -> dict[RecordKey, Record | dict[str, Any]]:
    """``--batch``: each provider model's attempts through its batch API; per attempt,
    the answer's fields (tested next, like a live answer) or a harness-error record.

    Raises:
        KeyboardInterrupt: after the sandboxes are cleaned up; every batch sent is
            recorded, and the next run picks it up.
    """
    config = runner.config
    answered: dict[RecordKey, Record | dict[str, Any]] = {}
    by_model: dict[str, list[WorkItem]] = defaultdict(list)
    for item in todo:
        if item.model.calls_provider and isinstance(item.model, LiteLLMModel):
            by_model[item.model.name].append(item)
    try:
        with _interrupts_as_keyboard():
            for items in by_model.values():
                model = items[0].model
                assert isinstance(model, LiteLLMModel)
                if runner.over_budget():
                    break  # --max-cost reached: no new batch; the pool counts them not started
                batch = BatchRun(
                    model, config.out, poll_s=config.batch_poll_s,
                    say=(lambda line: print(line, file=sys.stderr, flush=True))
                    if config.progress else (lambda line: None),
                )  # fmt: skip
                ids = {custom_id(item.key, item.prompt.sha): item for item in items}
                batch_ids = batch.submit(
                    {cid: (item.prompt.sha, item.prompt.text) for cid, item in ids.items()}
                )
                answers = batch.wait(batch_ids, runner.stop.is_set)
                for cid, item in ids.items():
                    answer = answers.get(cid)
                    if answer is None or answer.fields is None:
                        message = answer.error if answer else "no answer in the batch"
                        answered[item.key] = runner.harness_error(item, message or "")
                    else:
                        runner.spent(answer.fields["cost_usd"])
                        answered[item.key] = answer.fields
    except KeyboardInterrupt:
        runner.stop.set()
        runner.close()
        print(
            f"\nrcb: interrupted; the batches sent are recorded in {config.out / 'batches'}. "
            "Run the same command again to pick them up.",
            file=sys.stderr,
        )
        raise
    except Exception as exc:
        runner.close()
        raise RcbError(
            f"--batch: the provider's batch API failed: {type(exc).__name__}: {exc}"
        ) from exc
    return answered


def _run_pool(
    runner: _Runner,
    todo: list[WorkItem],
    summary: EvalSummary,
    answered: dict[RecordKey, Record | dict[str, Any]] | None = None,
) -> None:
    """Run ``todo`` in two stages with their own limits: model calls (``concurrency``
    threads; each model's own limiter may hold fewer in flight) and test runs
    (``workers`` threads). An answered attempt waits for a test worker; at most
    ``concurrency + 2 * workers`` attempts are between admission and their record,
    so memory stays flat however long the run. Agent mode alternates calls and
    visible tests within one attempt, so its attempts run whole on a test worker
    (their calls still go through the model's limiter)."""
    config = runner.config
    in_flight = config.concurrency + 2 * config.workers
    answered = answered or {}

    def save(records: list[Record] | None) -> str | None:
        if not records or runner.stop.is_set():
            return None  # interrupted mid-attempt: nothing is recorded, it reruns next time
        for record in records:
            runner.store.append(record)
        return records[-1].status

    def recorded(item: WorkItem, record: Record) -> str | None:
        try:
            return save([record])
        finally:
            runner.item_done(item.task)

    def call_stage(item: WorkItem) -> str | dict[str, Any] | None:
        if item.model.calls_provider and runner.over_budget():
            runner.item_done(item.task)
            return _CAPPED
        try:
            result = runner.answer(item)
        except BaseException:
            runner.item_done(item.task)
            raise
        return recorded(item, result) if isinstance(result, Record) else result

    def test_stage(item: WorkItem, fields: dict[str, Any] | None) -> str | None:
        try:
            if fields is None:
                return save(runner.attempts(item))
            record = runner.scored(item, fields)
            return save(None if record is None else [record])
        finally:
            runner.item_done(item.task)

    calls = ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="rcb-call")
    tests = ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="rcb-test")

    def wind_down(pending: dict[Future[Any], WorkItem], timeout_s: float) -> None:
        """Start nothing more, end what runs, and leave no sandbox behind: cancel what is
        queued, close the backend (which ends the tests in flight), wait for the workers
        still running (a cancelled future never counts as done for wait()), then close
        again for anything a worker opened while the first close ran."""
        runner.stop.set()
        for future in pending:
            future.cancel()
        calls.shutdown(wait=False, cancel_futures=True)
        tests.shutdown(wait=False, cancel_futures=True)
        runner.close()
        wait([f for f in pending if not f.cancelled()], timeout=timeout_s)
        runner.close()

    with (
        _interrupts_as_keyboard(),
        RunProgress(len(todo), "evaluate", enabled=config.progress) as progress,
    ):
        pending: dict[Future[Any], WorkItem] = {}
        queue = iter(todo)

        def admit() -> None:
            while len(pending) < in_flight:
                item = next(queue, None)
                if item is None:
                    return
                ready = answered.pop(item.key, None)  # a batch's answer: already paid for
                if ready is None and item.model.calls_provider and runner.over_budget():
                    summary.not_started += 1
                    runner.item_done(item.task)
                    continue
                if isinstance(ready, Record):
                    pending[tests.submit(recorded, item, ready)] = item
                elif ready is not None:
                    pending[tests.submit(test_stage, item, ready)] = item
                elif item.agent_turns:
                    pending[tests.submit(test_stage, item, None)] = item
                else:
                    pending[calls.submit(call_stage, item)] = item

        try:
            admit()
            while pending:
                finished, _ = wait(list(pending), timeout=0.5, return_when=FIRST_COMPLETED)
                for future in finished:
                    item = pending.pop(future)
                    result = future.result()
                    if isinstance(result, dict):
                        if not runner.stop.is_set():
                            pending[tests.submit(test_stage, item, result)] = item
                        continue
                    if result == _CAPPED:
                        summary.not_started += 1
                    elif result is not None:
                        summary.done += 1
                        progress.advance(result, cost_usd=runner.cost_usd)
                admit()
        except KeyboardInterrupt:
            summary.interrupted = True
            wind_down(pending, timeout_s=10)
            print(
                f"\nrcb: interrupted; {summary.done} new records are saved in {runner.store.path}. "
                "Run the same command again to resume.",
                file=sys.stderr,
            )
            raise
        except BaseException:
            wind_down(pending, timeout_s=60)
            raise
    calls.shutdown(wait=True)
    tests.shutdown(wait=True)
    runner.close()
