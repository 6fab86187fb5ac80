"""Cases for DeepConf: each drives the authors' code (deepconf/utils.py, processors.py,
wrapper.py) on fixed or seeded inputs and returns what it computed.

The online and offline runs use a scripted model in place of vLLM: it replays logit
rows, applies the request's DeepConf logits processor at every step exactly as vLLM
would, and returns vLLM-shaped outputs (text, token ids, top-20 logprobs, finish
reason). The checks (another sandbox) compare with hand-worked values, with the
paper's definitions recomputed from the same seeds, and with the reference.
"""

import os
import sys
from types import SimpleNamespace

import numpy as np
import torch

from _deepconf_inputs import (  # noqa: E402
    EOS,
    GROUP,
    SEED,
    TOPK,
    logprob_positions,
    long_traces,
    processor_logits,
    scripted_traces,
)

from deepconf.outputs import DeepThinkOutput  # noqa: E402
from deepconf.processors import ConfPerReqLogitsProcessor  # noqa: E402
from deepconf.utils import (  # noqa: E402
    calculate_bottom_window_confidence,
    compute_all_voting_results,
    compute_confidence,
    compute_least_grouped,
    filter_top_confidence,
    weighted_majority_vote,
)
from deepconf.wrapper import DeepThinkLLM  # noqa: E402
from vllm import SamplingParams  # noqa: E402


class Logprob:
    """vLLM's Logprob: the value is in ``.logprob``."""

    def __init__(self, logprob):
        self.logprob = logprob


def as_vllm(positions):
    return [{token: Logprob(value) for token, value in enumerate(row)} for row in positions]


def plain(value):
    """numpy scalars inside nested results become Python numbers."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


# ---- token confidence ------------------------------------------------------------------


def case_token_confidence_hand():
    positions = [
        {3: Logprob(-0.1), 7: Logprob(-2.3), 1: Logprob(-4.0)},
        {},
        {5: Logprob(-0.02)},
        {2: Logprob(-1.25), 4: Logprob(-3.75)},
    ]
    return compute_confidence(positions)


def case_token_confidence_random():
    return compute_confidence(as_vllm(logprob_positions(SEED)))


# ---- group confidence --------------------------------------------------------------------


def case_group_confidence_hand():
    return {
        "pairs": compute_least_grouped([1.0, 2.0, 4.0, 3.0], 2),
        "rounded": compute_least_grouped([0.1231, 0.9871, 0.5552], 2),
        "whole": compute_least_grouped([1.0, 2.0, 3.0], 3),
        "short": compute_least_grouped([1.0, 2.5, 3.5], 5),
        "empty": compute_least_grouped([], 4),
    }


def case_group_confidence_random():
    traces = long_traces(SEED + 1, 3, min_len=40, max_len=400)
    return [compute_least_grouped(trace["confs"], size) for trace, size in zip(traces, (1, 7, 32))]


# ---- confidence-weighted majority vote -------------------------------------------------------


def case_weighted_vote_hand():
    return {
        "weights_beat_counts": weighted_majority_vote(["x", "x", "x", "y"], [1.0, 1.0, 1.0, 3.5]),
        "none_skipped": weighted_majority_vote(
            ["a", "b", "a", "c", None, 3, "3"], [0.5, 0.9, 0.3, 0.1, 5.0, 0.2, 0.05]
        ),
        "string_keys": weighted_majority_vote([1, 1.0, "1"], [1.0, 1.5, 1.0]),
        "numpy_weights": weighted_majority_vote(["p", "q", "q"], np.array([2.5, 1.0, 1.25])),
        "all_none": weighted_majority_vote([None, None], [1.0, 2.0]),
        "empty": weighted_majority_vote([], []),
    }


def case_weighted_vote_random():
    rng = np.random.default_rng(SEED + 2)
    results = []
    for _ in range(20):
        n = int(rng.integers(5, 60))
        answers = [str(a) for a in rng.choice(["A", "B", "C", "D", "E"], n)]
        weights = list(rng.uniform(0.0, 10.0, n))
        results.append(weighted_majority_vote(answers, weights))
    return results


# ---- bottom-10% and lowest group confidence -----------------------------------------------------


def case_bottom_window_hand():
    trace = {"confs": [5.0, 4.0, 3.0, 2.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}
    return {
        "bottom_10": calculate_bottom_window_confidence(trace, window_size=3, bottom_percent=0.1),
        "bottom_50": calculate_bottom_window_confidence(trace, window_size=3, bottom_percent=0.5),
        "lowest": calculate_bottom_window_confidence(trace, window_size=3, bottom_percent=-1),
        "all_windows": calculate_bottom_window_confidence(trace, window_size=3, bottom_percent=1.0),
        "window_of_all": calculate_bottom_window_confidence(trace, window_size=10, bottom_percent=0.5),
        "short": calculate_bottom_window_confidence(trace, window_size=11, bottom_percent=0.1),
        "no_confs": calculate_bottom_window_confidence({"confs": []}, window_size=3),
    }


def case_bottom_window_random():
    traces = long_traces(SEED + 3, 6)
    return {
        "bottom_10": [calculate_bottom_window_confidence(t) for t in traces],
        "lowest": [calculate_bottom_window_confidence(t, bottom_percent=-1) for t in traces],
        "small_windows": [
            calculate_bottom_window_confidence(t, window_size=size, bottom_percent=share)
            for t, size, share in zip(traces, (16, 64, 256, 512, 5, 1), (0.1, 0.25, 0.05, 0.5, 0.01, 0.2))
        ],
    }


# ---- confidence filtering ----------------------------------------------------------------------


def kept_ids(traces, kind, share):
    return [trace["id"] for trace in filter_top_confidence(traces, kind, share)]


def case_filtering_random():
    traces = long_traces(SEED + 4, 20)
    out = {}
    for kind in ("mean", "tail", "bottom_window", "min_window"):
        out[kind] = {str(share): kept_ids(traces, kind, share) for share in (0.1, 0.5, 0.9)}
    out["thirty_tail"] = kept_ids(long_traces(SEED + 5, 30), "tail", 0.1)
    return out


def case_filtering_min_window():
    """Traces whose ranking by lowest group confidence differs from their ranking by mean."""
    flat = [8.0] * 6000
    dipped = [10.0] * 6000
    dipped[:1000] = [1.0] * 1000
    shallow = [9.0] * 6000
    shallow[:300] = [6.0] * 300
    low = [7.5] * 6000
    traces = [{"id": i, "confs": c} for i, c in enumerate([flat, dipped, shallow, low])]
    return {kind: kept_ids(traces, kind, 0.5) for kind in ("min_window", "bottom_window", "mean", "tail")}


def case_filtering_ties():
    traces = [{"id": i, "confs": [c] * 3} for i, c in enumerate([1.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 0.5])]
    return {
        "top10": kept_ids(traces, "mean", 0.1),
        "top50": kept_ids(traces, "mean", 0.5),
        "single": kept_ids(traces[:1], "tail", 0.1),
        "empty": kept_ids([], "tail", 0.1),
    }


# ---- all voting methods, with the top-10% filtered ones ---------------------------------------------


def case_voting_results_random():
    traces = long_traces(SEED + 6, 20)
    traces[3]["extracted_answer"] = None
    traces[11]["extracted_answer"] = ""
    return plain(compute_all_voting_results(traces))


def case_voting_results_thirty():
    return plain(compute_all_voting_results(long_traces(SEED + 7, 30, answers=("1", "2"))))


def case_voting_results_small_confidence():
    traces = long_traces(SEED + 13, 20)
    peak = max(max(trace["confs"]) for trace in traces)
    for trace in traces:
        trace["confs"] = [round(c / (1.1 * peak), 3) for c in trace["confs"]]
    return plain(compute_all_voting_results(traces))


def case_voting_results_zero_confidence():
    traces = [{"id": i, "confs": [0.0] * 5, "extracted_answer": a} for i, a in enumerate("aabab")]
    return plain(compute_all_voting_results(traces))


# ---- the online early-stopping logits processor ------------------------------------------------


def case_processor_confidence_hand():
    processor = ConfPerReqLogitsProcessor(threshold=0.0, eos_token_id=0, conf_group_size=4, conf_topk=2)
    logits = torch.log(torch.tensor([0.5, 0.25, 0.125, 0.125], dtype=torch.float64))
    return processor.compute_conf(logits)


def case_processor_confidence_random():
    rows = processor_logits(SEED + 8, steps=12)
    out = {}
    for k in (1, 5, TOPK):
        processor = ConfPerReqLogitsProcessor(threshold=0.0, eos_token_id=EOS, conf_group_size=4, conf_topk=k)
        out[str(k)] = [processor.compute_conf(torch.tensor(row)) for row in rows]
    processor = ConfPerReqLogitsProcessor(threshold=0.0, eos_token_id=EOS, conf_group_size=4, conf_topk=TOPK)
    out["float32"] = [processor.compute_conf(torch.tensor(row, dtype=torch.float32)) for row in rows]
    return out


def run_processor(rows, threshold, group, topk=TOPK):
    processor = ConfPerReqLogitsProcessor(threshold, EOS, group, topk)
    returned, window = [], []
    for t, row in enumerate(rows):
        out = processor(list(range(t)), torch.tensor(row))
        returned.append(out.numpy().copy())
        window.append(list(processor.conf_group_list))
    return {"logits": np.array(returned), "window": window}


def case_processor_stream():
    rows = processor_logits(SEED + 9)
    return {
        "mid": run_processor(rows, threshold=6.0, group=GROUP),
        "high": run_processor(rows, threshold=9.0, group=3),
        "never": run_processor(rows, threshold=0.5, group=GROUP),
        "group_one": run_processor(rows[:10], threshold=7.0, group=1),
    }


def case_processor_waits_for_full_window():
    flat = np.zeros((6, 8))  # confidence log(8) ≈ 2.08 at every step, below the threshold
    return run_processor(flat, threshold=5.0, group=4, topk=8)


# ---- the online and offline algorithms, with a scripted model in vLLM's place -------------------------


class ScriptedEngine:
    """Replays one script per request, in request order, applying the DeepConf logits
    processor that the request's extra_args ask for at every step (as vLLM would)."""

    def __init__(self, scripts):
        self.scripts = scripts
        self.served = 0

    def generate(self, prompts, params_list):
        if isinstance(params_list, list) and len(params_list) != len(prompts):
            # as vLLM's LLM.generate: one SamplingParams per prompt
            raise ValueError("The lengths of prompts and params must be the same.")
        outputs = []
        for _, params in zip(prompts, params_list):
            rows, answer = self.scripts[self.served]
            self.served += 1
            extra = params.extra_args
            processor = None
            if extra:
                processor = ConfPerReqLogitsProcessor(
                    extra["conf_threshold"], extra["eos_token_id"], extra["conf_group_size"], extra["conf_topk"]
                )
            token_ids, logprobs = [], []
            for t, row in enumerate(rows):
                raw = torch.tensor(row)
                logits = raw.clone() if processor is None else processor(list(token_ids), raw.clone())
                token = int(torch.argmax(logits))
                top = torch.topk(torch.log_softmax(raw, dim=-1), params.logprobs)
                logprobs.append({int(i): Logprob(float(v)) for v, i in zip(top.values, top.indices)})
                token_ids.append(token)
                if token == EOS:
                    break
            finished = len(token_ids) == len(rows)
            text = " ".join(f"t{token}" for token in token_ids[:-1])
            if finished:
                text += f" so the answer is $\\boxed{{{answer}}}$"
            completion = SimpleNamespace(text=text, token_ids=token_ids, logprobs=logprobs, finish_reason="stop")
            outputs.append(SimpleNamespace(outputs=[completion]))
        return outputs


def scripted_llm(scripts):
    llm = DeepThinkLLM.__new__(DeepThinkLLM)
    llm.model_name = "scripted"
    llm.llm = ScriptedEngine(scripts)
    llm.tokenizer = SimpleNamespace(eos_token_id=EOS)
    llm.init_times = {"llm_init_time": 0.0, "tokenizer_init_time": 0.0}
    return llm


def summary(output):
    final = output.final_traces if output.mode == "online" else output.all_traces
    return plain({
        "conf_bar": output.conf_bar,
        "warmup_min_confs": [t["min_conf"] for t in output.warmup_traces],
        "final_min_confs": [t.get("min_conf") for t in final],
        "final_tokens": [t["num_tokens"] for t in final],
        "final_stop": [t["stop_reason"] for t in final],
        "final_answers": [t["extracted_answer"] for t in final],
        "voting_answers": output.voting_answers,
        "voting_weights": output.voting_weights,
        "final_answer": output.final_answer,
        "voting_results": output.voting_results,
        "total_tokens": output.total_tokens,
    })


def online(seed, percentile, warmup=8, budget=24):
    llm = scripted_llm(scripted_traces(seed, budget))
    params = SamplingParams(temperature=0.6, top_p=0.95, max_tokens=128, logprobs=TOPK)
    output = llm.deepthink(
        "q", mode="online", warmup_traces=warmup, total_budget=budget,
        confidence_percentile=percentile, window_size=GROUP, sampling_params=params,
    )
    return summary(output)


def case_online_high():
    return online(SEED + 10, percentile=90)


def case_online_low():
    return online(SEED + 10, percentile=10)


def case_online_percentiles():
    return {str(p): online(SEED + 11, percentile=p, warmup=10, budget=16) for p in (25, 50, 75)}


def case_offline():
    llm = scripted_llm(scripted_traces(SEED + 12, 12))
    params = SamplingParams(temperature=0.6, top_p=0.95, max_tokens=128, logprobs=TOPK)
    return summary(llm.deepthink("q", mode="offline", budget=12, window_size=GROUP, sampling_params=params))


# ---- the voting step of the online algorithm, on traces given directly ---------------------------------


def basic_voting(mode, conf_bar=None, warmup=(), final=(), all_traces=()):
    output = DeepThinkOutput()
    output.mode = mode
    output.conf_bar = conf_bar
    output.warmup_traces = [dict(t) for t in warmup]
    output.final_traces = [dict(t) for t in final]
    output.all_traces = [dict(t) for t in all_traces]
    DeepThinkLLM._perform_basic_voting(None, output)
    return plain({
        "answers": output.voting_answers,
        "weights": output.voting_weights,
        "voted": output.voted_answer,
        "voting_trace_ids": [t["id"] for t in getattr(output, "all_voting_traces", [])],
    })


WARMUP = [
    {"id": "w0", "min_conf": 9.5, "extracted_answer": "7"},
    {"id": "w1", "min_conf": 4.0, "extracted_answer": "5"},
    {"id": "w2", "min_conf": 6.0, "extracted_answer": "5"},
    {"id": "w3", "min_conf": 8.0, "extracted_answer": None},
    {"id": "w4", "min_conf": 3.9, "extracted_answer": "5"},
    {"id": "w5", "min_conf": 7.25, "extracted_answer": "7"},
]
FINAL = [
    {"id": "f0", "min_conf": 8.5, "stop_reason": "stop", "extracted_answer": "5"},
    {"id": "f1", "min_conf": 3.0, "stop_reason": "gconf_threshold", "extracted_answer": "7"},
    {"id": "f2", "min_conf": 6.5, "stop_reason": "stop", "extracted_answer": "7"},
    {"id": "f3", "min_conf": 9.0, "stop_reason": "length", "extracted_answer": ""},
    {"id": "f4", "min_conf": 6.0, "stop_reason": "stop", "extracted_answer": "5"},
]


def case_basic_voting_online():
    return {
        "bar_6": basic_voting("online", 6.0, WARMUP, FINAL),
        "bar_9": basic_voting("online", 9.0, WARMUP, FINAL),
        "bar_0": basic_voting("online", 0.0, WARMUP, FINAL),
    }


def case_basic_voting_offline():
    return basic_voting("offline", all_traces=WARMUP + FINAL)
