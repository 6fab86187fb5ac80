"""``rcb evaluate --dry-run``: what a run would ask of each model, before it starts.

Counted from the real prompts of the attempts still to do (a resumed run counts only
what is left): calls, input tokens (litellm's token counter for the model, which runs
offline: the provider's tokenizer where litellm ships it, else OpenAI's), the part of them a provider's
prompt cache would serve (the paper's text, which every snippet of a paper shares, from
the second call on, when the provider caches and the prefix is long enough to be
cached), output tokens (the reference snippet's length, fenced: a model that explains
or reasons writes more), and dollars at the registry's prices, else litellm's price
map.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from rcb_action.models import LiteLLMModel, Model, estimate_tokens, fenced, import_litellm
from rcb_action.runner._evaluate import EvalConfig, Prepared, WorkItem, prepare

# Providers cache a prefix only from this many tokens on (OpenAI and Anthropic: 1,024).
MIN_CACHED_PREFIX_TOKENS = 1024


@dataclass
class ModelEstimate:
    model: str
    attempts: int
    calls: int
    tokens_in: int
    tokens_cached: int
    tokens_out: int
    cost_usd: float | None
    calls_provider: bool


def token_counter(model: Model) -> Callable[[str], int]:
    """Counts tokens of a text as ``model``'s provider would, offline (litellm's counter);
    four characters a token where litellm cannot count."""
    if not isinstance(model, LiteLLMModel):
        return estimate_tokens
    litellm = import_litellm()
    name = model.litellm_name

    def count(text: str) -> int:
        try:
            return int(litellm.token_counter(model=name, text=text))
        except Exception:  # a model litellm has no tokenizer for
            return estimate_tokens(text)

    return count


def _estimate_model(model: Model, items: list[WorkItem], agent_turns: int) -> ModelEstimate:
    if not model.calls_provider:
        return ModelEstimate(model.name, len(items), 0, 0, 0, 0, 0.0, False)
    count = functools.cache(token_counter(model))  # samples share a prompt, snippets a prefix
    tokens_in = tokens_out = cached = 0
    cost = 0.0
    prices = model.prices() if isinstance(model, LiteLLMModel) else None
    cache_known = prices is not None and prices.cache_read is not None
    seen_prefix: set[tuple[str, str]] = set()
    for item in items:
        prompt = item.prompt
        full = count(prompt.text)
        out = count(fenced("".join(item.task.reference_body(item.snippet))))
        prefix = count(prompt.text[: prompt.prefix_chars]) if prompt.prefix_chars else 0
        hit = 0
        written = 0
        if cache_known and prefix >= MIN_CACHED_PREFIX_TOKENS:
            key = (item.task.id, item.paper)
            if key in seen_prefix:
                hit = prefix
            else:
                seen_prefix.add(key)
                written = prefix
        tokens_in += full
        tokens_out += out
        cached += hit
        if prices is not None:
            read = prices.cache_read if prices.cache_read is not None else prices.input
            write = prices.cache_write if prices.cache_write is not None else prices.input
            cost += (
                (full - hit - written) * prices.input
                + hit * read
                + written * write
                + out * prices.output
            )
    calls = len(items) * (1 + agent_turns)
    return ModelEstimate(
        model.name,
        len(items),
        calls,
        tokens_in,
        cached,
        tokens_out,
        cost if prices is not None else None,
        True,
    )


def estimate(
    config: EvalConfig, *, model_objects: list[Model] | None = None
) -> list[ModelEstimate]:
    """Per model, what the attempts still to do would cost; nothing is called or run.

    Raises:
        RcbError: as :func:`~rcb_action.runner.evaluate` would before starting.
    """
    prepared: Prepared = prepare(config, model_objects=model_objects)
    by_model: dict[str, list[WorkItem]] = defaultdict(list)
    for item in prepared.todo:
        by_model[item.model.name].append(item)
    return [
        _estimate_model(model, by_model[model.name], config.agent_turns)
        for model in prepared.models
    ]


def format_estimates(estimates: list[ModelEstimate], config: EvalConfig) -> str:
    """The dry run's table, with the totals and what the figures rest on."""
    rows = [("model", "attempts", "calls", "input tokens", "cached", "output tokens", "dollars")]
    total = 0.0
    unknown = []
    for e in estimates:
        if e.cost_usd is None and e.calls_provider:
            unknown.append(e.model)
        total += e.cost_usd or 0.0
        dollars = "n/a" if e.cost_usd is None else f"{e.cost_usd:.2f}"
        rows.append(
            (
                e.model,
                str(e.attempts),
                str(e.calls),
                f"{e.tokens_in:,}",
                f"{e.tokens_cached:,}",
                f"{e.tokens_out:,}",
                dollars if e.calls_provider else "0 (no provider)",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in rows
    ]
    lines.append(
        f"estimated total: ${total:.2f}"
        + (f" (+ unpriced: {', '.join(unknown)})" if unknown else "")
    )
    if config.agent_turns:
        lines.append(
            f"calls count up to {config.agent_turns} rewrite(s) per attempt; tokens count first answers only"
        )
    lines.append(
        "rcb: dry run, nothing was called or run. Input tokens: the real prompts, counted with "
        "litellm's tokenizer for each model; cached: the paper's text a provider's prompt cache would serve; output: the "
        "reference snippet's length (models that explain or reason write more)."
    )
    return "\n".join(lines)
