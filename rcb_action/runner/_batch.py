"""``rcb evaluate --batch``: a model's prompts through its provider's batch API.

The attempts still to do for a model go to the provider as one batch (litellm's
``create_file`` and ``create_batch``); the batch's id is written to
``OUT/batches/<model>.json`` before anything waits on it, so an interrupted run picks
the same batch up again instead of paying for a second one. The run polls it until it
ends, then hands each answer to the test workers like a live answer, recorded with the
batch's id (``batch_id``) and its cost at the batch price (half the list price, as
OpenAI and Anthropic bill batches). Requests the batch failed, or a batch that failed
or expired, become harness errors, and the next run sends them in a new batch.

litellm's ``create_batch`` speaks OpenAI's batch API (``openai/`` models, and
OpenAI-compatible endpoints through ``OPENAI_BASE_URL``); other providers are refused
with one line.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rcb_action.errors import RcbError
from rcb_action.models import LiteLLMModel, Model, import_litellm
from rcb_action.names import path_key
from rcb_action.paths import write_atomic
from rcb_action.results import RecordKey

BATCH_PROVIDERS = ("openai",)
BATCH_DISCOUNT = 0.5
DONE_STATES = ("completed", "failed", "expired", "cancelled")


def provider_of(model: Model) -> str:
    name = model.litellm_name if isinstance(model, LiteLLMModel) else model.name
    return name.split("/", 1)[0] if "/" in name else "openai"


def check_batch_model(model: Model) -> None:
    """Raise when ``model`` cannot go through a batch.

    Raises:
        RcbError: its provider has no batch API that litellm can drive here.
    """
    if model.calls_provider and provider_of(model) not in BATCH_PROVIDERS:
        raise RcbError(
            f"--batch: model {model.name}: litellm's batch API drives "
            f"{', '.join(p + '/' for p in BATCH_PROVIDERS)} models here; run it without --batch"
        )


def custom_id(key: RecordKey, prompt_sha: str) -> str:
    """A request's id in the batch: the attempt and the exact prompt it was sent."""
    return hashlib.sha256(json.dumps([*key, prompt_sha]).encode()).hexdigest()[:40]


@dataclass
class BatchState:
    """What ``OUT/batches/<model>.json`` holds: each batch sent, with the requests
    (custom id -> prompt sha) it still answers."""

    path: Path
    batches: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> BatchState:
        if not path.is_file():
            return cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            batches = data["batches"]
            if not isinstance(batches, list):
                raise TypeError("batches is not a list")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RcbError(
                f"{path}: not a batch record rcb wrote ({exc}); delete it to send a new batch"
            ) from None
        return cls(path, batches)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps({"batches": self.batches}, indent=1).encode())


@dataclass
class BatchAnswer:
    """One request's outcome: the usage fields of an answer, or an error message."""

    fields: dict[str, Any] | None = None
    error: str | None = None


class BatchRun:
    """The batch side of one model in one run.

    Args:
        model: a litellm model of a batch provider.
        out: the results folder (its ``batches/`` holds the state).
        poll_s: seconds between looks at a batch in progress.
        say: where progress lines go.
    """

    def __init__(
        self,
        model: LiteLLMModel,
        out: Path,
        *,
        poll_s: float = 30.0,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.model = model
        self.provider = provider_of(model)
        self.state = BatchState.load(out / "batches" / f"{path_key(model.name)}.json")
        self.poll_s = poll_s
        self.say = say or (lambda line: print(line, file=sys.stderr, flush=True))

    def _body_model(self) -> str:
        name = self.model.litellm_name
        return name.split("/", 1)[1] if name.startswith(self.provider + "/") else name

    def submit(self, requests: dict[str, tuple[str, str]]) -> list[str]:
        """Send the requests (custom id -> (prompt sha, prompt text)) that no recorded
        batch holds; returns the ids of the batches that hold them all."""
        held = {
            cid: batch["id"]
            for batch in self.state.batches
            for cid, sha in batch["requests"].items()
            if cid in requests and requests[cid][0] == sha
        }
        missing = {cid: value for cid, value in requests.items() if cid not in held}
        ids = sorted(set(held.values()))
        if not missing:
            return ids
        litellm = import_litellm()
        lines = "".join(
            json.dumps(
                {
                    "custom_id": cid,
                    "method": "POST",
                    "url": "/v1/chat/completions",
                    "body": {
                        "model": self._body_model(),
                        "messages": [{"role": "user", "content": text}],
                    },
                }
            )
            + "\n"
            for cid, (_, text) in missing.items()
        )
        upload = litellm.create_file(
            file=("rcb-batch.jsonl", lines.encode("utf-8")),
            purpose="batch",
            custom_llm_provider=self.provider,
        )
        batch = litellm.create_batch(
            completion_window="24h",
            endpoint="/v1/chat/completions",
            input_file_id=upload.id,
            custom_llm_provider=self.provider,
        )
        self.state.batches.append(
            {
                "id": batch.id,
                "input_file_id": upload.id,
                "created_at": int(time.time()),
                "requests": {cid: sha for cid, (sha, _) in missing.items()},
            }
        )
        self.state.save()
        self.say(
            f"rcb: batch {batch.id} sent for {self.model.name}: {len(missing)} request(s); "
            f"recorded in {self.state.path}"
        )
        return [*ids, batch.id]

    def wait(self, batch_ids: list[str], stop: Callable[[], bool]) -> dict[str, BatchAnswer]:
        """Poll the batches until each has ended; the answers by custom id.

        Raises:
            KeyboardInterrupt: passed on; the batches stay recorded for the next run.
        """
        litellm = import_litellm()
        answers: dict[str, BatchAnswer] = {}
        pending = list(batch_ids)
        last: dict[str, str] = {}
        while pending and not stop():
            for batch_id in list(pending):
                batch = litellm.retrieve_batch(batch_id, custom_llm_provider=self.provider)
                counts = batch.request_counts
                line = f"{batch.status}, {getattr(counts, 'completed', 0)}/{getattr(counts, 'total', 0)} done"
                if last.get(batch_id) != line:
                    self.say(f"rcb: batch {batch_id} ({self.model.name}): {line}")
                    last[batch_id] = line
                if batch.status not in DONE_STATES:
                    continue
                pending.remove(batch_id)
                answers.update(self._read(litellm, batch))
            if pending:
                time.sleep(self.poll_s)
        self._forget(answers)
        return answers

    def _read(self, litellm: Any, batch: Any) -> dict[str, BatchAnswer]:
        record = next(b for b in self.state.batches if b["id"] == batch.id)
        answers: dict[str, BatchAnswer] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = litellm.file_content(file_id=file_id, custom_llm_provider=self.provider)
            for line in content.content.decode("utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    answers[row["custom_id"]] = self._answer(row, batch.id)
        for cid in record["requests"]:
            answers.setdefault(
                cid, BatchAnswer(error=f"batch {batch.id} {batch.status} without this request")
            )
        return answers

    def _answer(self, row: dict[str, Any], batch_id: str) -> BatchAnswer:
        response = row.get("response") or {}
        body = response.get("body") or {}
        if row.get("error") or response.get("status_code") != 200:
            error = row.get("error") or body.get("error") or response.get("status_code")
            return BatchAnswer(error=f"batch {batch_id}: request failed: {error}")
        usage = body.get("usage") or {}
        tokens_in = int(usage.get("prompt_tokens") or 0)
        tokens_out = int(usage.get("completion_tokens") or 0)
        text = ((body.get("choices") or [{}])[0].get("message") or {}).get("content") or ""
        return BatchAnswer(
            fields={
                "completion": text,
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "cost_usd": self._cost(tokens_in, tokens_out),
                "duration_model_s": 0.0,
                "batch_id": batch_id,
            }
        )

    def _cost(self, tokens_in: int, tokens_out: int) -> float:
        """The batch price: the model's list price (:meth:`LiteLLMModel.prices`) less
        the batch discount; 0 when no price is known."""
        prices = self.model.prices()
        if prices is None:
            return 0.0
        return (tokens_in * prices.input + tokens_out * prices.output) * BATCH_DISCOUNT

    def _forget(self, answers: dict[str, BatchAnswer]) -> None:
        """Drop failed requests (the next run sends them again) and batches that have
        nothing left to answer from the state."""
        for batch in self.state.batches:
            batch["requests"] = {
                cid: sha
                for cid, sha in batch["requests"].items()
                if not (cid in answers and answers[cid].error)
            }
        self.state.batches = [b for b in self.state.batches if b["requests"]]
        self.state.save()
