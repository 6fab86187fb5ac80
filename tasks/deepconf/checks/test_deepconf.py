"""Checks for DeepConf over the cases' outputs: hand-worked values, the paper's
definitions recomputed from the same seeds (token confidence, group confidence, the
bottom-10% and lowest group confidence, top-η% filtering, confidence-weighted voting,
the warmup threshold and early stopping), and the reference implementation's outputs.

Tolerances. deepconf rounds token and group confidences to 3 decimals. A window mean of
3-decimal values often ends in an exact 5 at the fourth decimal, and which way it rounds
then depends on the order of the additions, so group confidences (and what is computed
from them: min_conf, the threshold, voting weights) are compared with an absolute
tolerance of 1.001e-3. Values not rounded by the code (window means, filtered means)
are compared at rtol 1e-9: far above the error of any order of summation. The logit
processor's confidences are compared at rtol 1e-5 with an absolute floor of 1e-6: an
implementation may compute them in float32 (``logits.float()``, as LLM code often does)
even for float64 logits, and float32 rounding then moves them by up to a few 1e-7 (-log p
near p = 1 loses the most). Lists whose order a correct implementation may choose (the
traces kept by a filter, the traces that vote) are compared as multisets.
"""

import math

import numpy as np
import pytest
from _deepconf_inputs import (
    EOS,
    GROUP,
    SEED,
    TOPK,
    log_softmax,
    logprob_positions,
    long_traces,
    processor_logits,
)

ROUNDED = 1.001e-3


# a float64 value computed in float32 by a correct implementation: -log p near p = 1
# loses digits, so relative 1e-5 with an absolute floor of 1e-6
FLOAT32 = {"rtol": 1e-5, "atol": 1e-6}


def close(actual, desired, rtol=1e-9, atol=1e-9, what="value"):
    assert actual is not None, f"{what}: got None"
    np.testing.assert_allclose(np.asarray(actual, dtype=float), np.asarray(desired, dtype=float), rtol=rtol, atol=atol, err_msg=what)


# ---- token confidence: C_i = -(1/k) Σ_j log P_i(j) over the k logprobs returned ---------------------


def test_token_confidence_hand(outputs, reference):
    out = outputs["token_confidence_hand"]
    # (0.1 + 2.3 + 4.0) / 3 = 2.1333...; the empty position gives no value; (1.25 + 3.75) / 2
    close(out, [2.133, 0.02, 2.5], atol=1e-12)
    close(out, reference["token_confidence_hand"], atol=1e-12)


def test_token_confidence_random(outputs, reference):
    positions = logprob_positions(SEED)
    expected = [round(-float(np.mean(p)), 3) for p in positions if p]
    out = outputs["token_confidence_random"]
    assert len(out) == len(expected)
    close(out, expected, atol=1e-9)
    close(out, reference["token_confidence_random"], atol=1e-9)


# ---- group confidence: sliding-window means --------------------------------------------------------------


def test_group_confidence_hand(outputs, reference):
    out = outputs["group_confidence_hand"]
    close(out["pairs"], [1.5, 3.0, 3.5], atol=1e-12)
    close(out["rounded"], [0.555, 0.771], atol=1e-12)  # (0.1231 + 0.9871) / 2 = 0.5551, 0.77115
    close(out["whole"], [2.0], atol=1e-12)
    close(out["short"], [7.0 / 3.0], atol=ROUNDED)  # fewer tokens than a window: one group of all
    close(out["empty"], [0.0], atol=1e-12)
    ref = reference["group_confidence_hand"]
    for key in ref:
        close(out[key], ref[key], atol=ROUNDED, what=key)


def test_group_confidence_random(outputs, reference):
    traces = long_traces(SEED + 1, 3, min_len=40, max_len=400)
    out = outputs["group_confidence_random"]
    assert len(out) == 3
    for got, trace, size, ref in zip(out, traces, (1, 7, 32), reference["group_confidence_random"]):
        confs = np.asarray(trace["confs"])
        expected = np.convolve(confs, np.ones(size) / size, mode="valid")
        assert len(got) == len(expected)
        close(got, expected, atol=ROUNDED, what=f"window {size}")
        close(got, ref, atol=ROUNDED, what=f"window {size} vs reference")


# ---- confidence-weighted majority vote ------------------------------------------------------------------


def test_weighted_vote_hand(outputs, reference):
    out = outputs["weighted_vote_hand"]
    assert out["weights_beat_counts"] == "y"  # 3.5 > 1 + 1 + 1
    assert out["none_skipped"] == "b"  # a: 0.8, b: 0.9, c: 0.1, "3": 0.25; None's 5.0 is ignored
    assert out["string_keys"] == "1"  # "1": 1 + 1, "1.0": 1.5
    assert out["numpy_weights"] == "p"
    assert out["all_none"] is None
    assert out["empty"] is None
    assert out == reference["weighted_vote_hand"]


def test_weighted_vote_random(outputs, reference):
    rng = np.random.default_rng(SEED + 2)
    expected = []
    for _ in range(20):
        n = int(rng.integers(5, 60))
        answers = [str(a) for a in rng.choice(["A", "B", "C", "D", "E"], n)]
        weights = rng.uniform(0.0, 10.0, n)
        totals = {}
        for a, w in zip(answers, weights):
            totals[a] = totals.get(a, 0.0) + w
        expected.append(max(totals, key=totals.get))
    assert outputs["weighted_vote_random"] == expected
    assert outputs["weighted_vote_random"] == reference["weighted_vote_random"]


# ---- bottom-10% and lowest group confidence ------------------------------------------------------------


def bottom_window(confs, window, share):
    confs = np.asarray(confs, dtype=float)
    if len(confs) < window:
        return float(np.mean(confs))
    means = np.convolve(confs, np.ones(window) / window, mode="valid")
    if share == -1:
        return float(means.min())
    count = max(1, int(len(means) * share))
    return float(np.sort(means)[:count].mean())


def test_bottom_window_hand(outputs, reference):
    out = outputs["bottom_window_hand"]
    # window means of [5,4,3,2,1,2,3,4,5,6] with 3 tokens: 4, 3, 2, 5/3, 2, 3, 4, 5
    close(out["bottom_10"], 5.0 / 3.0)  # int(8 * 0.1) = 0 -> at least one window: the lowest
    close(out["bottom_50"], (5.0 / 3.0 + 2.0 + 2.0 + 3.0) / 4.0)
    close(out["lowest"], 5.0 / 3.0)
    close(out["all_windows"], (4.0 + 3.0 + 2.0 + 5.0 / 3.0 + 2.0 + 3.0 + 4.0 + 5.0) / 8.0)  # every window
    close(out["window_of_all"], 3.5)
    close(out["short"], 3.5)  # shorter than one window: the mean of all tokens
    close(out["no_confs"], 0.0)
    for key, value in reference["bottom_window_hand"].items():
        close(out[key], value, what=key)


def test_bottom_window_random(outputs, reference):
    traces = long_traces(SEED + 3, 6)
    out = outputs["bottom_window_random"]
    close(out["bottom_10"], [bottom_window(t["confs"], 2048, 0.1) for t in traces], what="bottom 10%")
    close(out["lowest"], [bottom_window(t["confs"], 2048, -1) for t in traces], what="lowest")
    expected = [
        bottom_window(t["confs"], size, share)
        for t, size, share in zip(traces, (16, 64, 256, 512, 5, 1), (0.1, 0.25, 0.05, 0.5, 0.01, 0.2))
    ]
    close(out["small_windows"], expected, what="other windows and shares")
    for key, value in reference["bottom_window_random"].items():
        close(out[key], value, what=key)


# ---- top-η% confidence filtering -----------------------------------------------------------------------


def trace_confidence(trace, kind):
    confs = trace["confs"]
    if kind == "tail":
        return float(np.mean(confs[-2048:]))
    if kind == "bottom_window":
        return bottom_window(confs, 2048, 0.1)
    if kind == "min_window":
        return bottom_window(confs, 2048, -1)
    return float(np.mean(confs))


def kept(traces, kind, share):
    conf = np.array([trace_confidence(t, kind) for t in traces])
    threshold = np.percentile(conf, (1 - share) * 100)
    return sorted(t["id"] for t, c in zip(traces, conf) if c >= threshold)


def test_filtering_random(outputs, reference):
    traces = long_traces(SEED + 4, 20)
    out = outputs["filtering_random"]
    ref = reference["filtering_random"]
    for kind in ("mean", "tail", "bottom_window", "min_window"):
        for share in (0.1, 0.5, 0.9):
            got = sorted(out[kind][str(share)])
            assert len(got) == int(round(share * 20)), (kind, share, got)
            assert got == kept(traces, kind, share), (kind, share)
            assert got == sorted(ref[kind][str(share)]), (kind, share)
    thirty = long_traces(SEED + 5, 30)
    assert sorted(out["thirty_tail"]) == kept(thirty, "tail", 0.1)
    assert sorted(out["thirty_tail"]) == sorted(ref["thirty_tail"])


def test_filtering_min_window(outputs, reference):
    out = outputs["filtering_min_window"]
    # means 8, 8.5, 8.85, 7.5; lowest 2048-token window 8, 10 - 9 * 1000 / 2048 ≈ 5.6,
    # 9 - 3 * 300 / 2048 ≈ 8.56, 7.5; mean of the bottom 10% of windows (the first 395)
    # ≈ 6.5 for the dipped trace; last 2048 tokens 8, 10, 9, 7.5. (The mean over all
    # windows of the dipped trace is ≈ 9.4: the dip sits where few windows reach.)
    assert sorted(out["min_window"]) == [0, 2]
    assert sorted(out["bottom_window"]) == [0, 2]
    assert sorted(out["mean"]) == [1, 2]
    assert sorted(out["tail"]) == [1, 2]
    for key, value in reference["filtering_min_window"].items():
        assert sorted(out[key]) == sorted(value), key


def test_filtering_ties(outputs, reference):
    out = outputs["filtering_ties"]
    # the 90th percentile of [1, 2, 3 x7, 0.5] is 3: every trace at 3 is kept
    assert sorted(out["top10"]) == [2, 3, 4, 5, 6, 7, 8]
    assert sorted(out["top50"]) == [2, 3, 4, 5, 6, 7, 8]
    assert out["single"] == [0]
    assert out["empty"] == []
    for key, value in reference["filtering_ties"].items():
        assert sorted(out[key]) == sorted(value), key


# ---- all voting methods, with the top-10% filtered ones -------------------------------------------------


def assert_voting_results(got, ref, atol=1e-9, rtol=1e-9):
    assert isinstance(got, dict), got
    assert sorted(got) == sorted(ref)
    for method, want in ref.items():
        have = got[method]
        if want is None:
            assert have is None, method
            continue
        assert have["answer"] == want["answer"], method
        assert have["num_votes"] == want["num_votes"], method
        if want["confidence"] is None:
            assert have["confidence"] is None, method
        else:
            close(have["confidence"], want["confidence"], rtol=rtol, atol=atol, what=method)


def filtered_vote(traces, kind):
    conf = {t["id"]: trace_confidence(t, kind) for t in traces}
    ids = set(kept(traces, kind, 0.1))
    chosen = [t for t in traces if t["id"] in ids]
    totals = {}
    for t in chosen:
        totals[t["extracted_answer"]] = totals.get(t["extracted_answer"], 0.0) + conf[t["id"]]
    return max(totals, key=totals.get), len(chosen), float(np.mean([conf[t["id"]] for t in chosen]))


def test_voting_results_random(outputs, reference):
    traces = long_traces(SEED + 6, 20)
    valid = [t for t in traces if t["id"] not in (3, 11)]
    out = outputs["voting_results_random"]
    for key, kind in (("top10_tail_filtered", "tail"), ("top10_bottom_window_filtered", "bottom_window")):
        answer, votes, confidence = filtered_vote(valid, kind)
        assert out[key]["answer"] == answer, key
        assert out[key]["num_votes"] == votes, key
        close(out[key]["confidence"], confidence, what=key)
    assert_voting_results(out, reference["voting_results_random"])


def test_voting_results_thirty(outputs, reference):
    traces = long_traces(SEED + 7, 30, answers=("1", "2"))
    out = outputs["voting_results_thirty"]
    for key, kind in (("top10_tail_filtered", "tail"), ("top10_bottom_window_filtered", "bottom_window")):
        answer, votes, confidence = filtered_vote(traces, kind)
        assert votes == 3
        assert out[key]["answer"] == answer, key
        assert out[key]["num_votes"] == votes, key
        close(out[key]["confidence"], confidence, what=key)
    assert_voting_results(out, reference["voting_results_thirty"])


def test_voting_results_small_confidence(outputs, reference):
    traces = long_traces(SEED + 13, 20)
    peak = max(max(trace["confs"]) for trace in traces)
    for trace in traces:
        trace["confs"] = [round(c / (1.1 * peak), 3) for c in trace["confs"]]
    out = outputs["voting_results_small_confidence"]
    # every confidence is below 1, all positive: every method gives a result
    assert len(out) == 7
    for key, kind in (("top10_tail_filtered", "tail"), ("top10_bottom_window_filtered", "bottom_window")):
        answer, votes, confidence = filtered_vote(traces, kind)
        assert confidence < 1.0
        assert out[key]["answer"] == answer, key
        assert out[key]["num_votes"] == votes, key
        close(out[key]["confidence"], confidence, what=key)
    assert_voting_results(out, reference["voting_results_small_confidence"])


def test_voting_results_zero_confidence(outputs, reference):
    out = outputs["voting_results_zero_confidence"]
    # every confidence is 0: only plain majority voting gives a result
    assert sorted(out) == ["majority"]
    assert out["majority"]["answer"] == "a"
    assert_voting_results(out, reference["voting_results_zero_confidence"])


# ---- the logits processor: token confidence from the top-k probabilities, and early stopping ---------------


def topk_confidence(row, k):
    lp = np.sort(log_softmax(np.asarray(row, dtype=float)))[::-1][:k]
    return -float(lp.sum()) / k


def test_processor_confidence_hand(outputs, reference):
    # top-2 of [0.5, 0.25, 0.125, 0.125]: -(log 0.5 + log 0.25) / 2 = 1.5 log 2
    close(outputs["processor_confidence_hand"], 1.5 * math.log(2.0), **FLOAT32)
    close(outputs["processor_confidence_hand"], reference["processor_confidence_hand"], **FLOAT32)


def test_processor_confidence_random(outputs, reference):
    rows = processor_logits(SEED + 8, steps=12)
    out = outputs["processor_confidence_random"]
    for k in (1, 5, TOPK):
        close(out[str(k)], [topk_confidence(row, k) for row in rows], **FLOAT32, what=f"k={k}")
    close(out["float32"], [topk_confidence(row.astype(np.float32), TOPK) for row in rows], rtol=1e-5, what="float32")
    for key, value in reference["processor_confidence_random"].items():
        close(out[key], value, **FLOAT32, what=key)


def expected_stream(rows, threshold, group, topk=TOPK):
    confs = [topk_confidence(row, topk) for row in rows]
    stops, windows = [], []
    for t in range(len(rows)):
        window = confs[max(0, t + 1 - group) : t + 1]
        windows.append(window)
        mean = float(np.mean(window))
        # far enough that float32 arithmetic (FLOAT32) cannot move it across
        assert abs(mean - threshold) > 1e-4, "a window mean sits on the threshold: change the case"
        stops.append(len(window) >= group and mean < threshold)
    return stops, windows


def assert_stream(out, ref, rows, threshold, group, topk=TOPK):
    stops, windows = expected_stream(rows, threshold, group, topk)
    logits = np.asarray(out["logits"])
    assert logits.shape == np.shape(rows)
    for t, (row, stop) in enumerate(zip(rows, stops)):
        if stop:
            assert logits[t, EOS] == row[EOS], f"step {t}: the EOS logit must keep its value"
            others = np.delete(logits[t], EOS)
            assert np.all(np.isneginf(others)), f"step {t}: the window mean is below the threshold: only EOS may stay"
        else:
            np.testing.assert_array_equal(logits[t], row, err_msg=f"step {t}: logits must pass unchanged")
        assert len(out["window"][t]) == len(windows[t]), f"step {t}: the window holds the last {group} confidences"
        close(out["window"][t], windows[t], **FLOAT32, what=f"window at step {t}")
    np.testing.assert_array_equal(logits, np.asarray(ref["logits"]))


def test_processor_stream(outputs, reference):
    rows = processor_logits(SEED + 9)
    out, ref = outputs["processor_stream"], reference["processor_stream"]
    assert_stream(out["mid"], ref["mid"], rows, 6.0, GROUP)
    assert_stream(out["high"], ref["high"], rows, 9.0, 3)
    assert_stream(out["never"], ref["never"], rows, 0.5, GROUP)
    assert_stream(out["group_one"], ref["group_one"], rows[:10], 7.0, 1)


def test_processor_waits_for_full_window(outputs, reference):
    flat = np.zeros((6, 8))
    out = outputs["processor_waits_for_full_window"]
    assert_stream(out, reference["processor_waits_for_full_window"], flat, 5.0, 4, topk=8)
    # the first three steps pass although every confidence is below the threshold
    assert not np.isneginf(np.asarray(out["logits"])[:3]).any()


# ---- the online algorithm (warmup threshold, early stopping, filtered voting) and the offline one --------------


def multiset(answers, weights):
    return sorted(zip(answers, [round(float(w), 2) for w in weights]))


def assert_run_matches(out, ref):
    if ref["conf_bar"] is None:
        assert out["conf_bar"] is None
    else:
        close(out["conf_bar"], ref["conf_bar"], atol=ROUNDED, what="conf_bar")
    close(out["warmup_min_confs"], ref["warmup_min_confs"], atol=ROUNDED, what="warmup min_conf")
    assert out["final_tokens"] == ref["final_tokens"], "tokens generated per trace (early stopping)"
    assert out["final_stop"] == ref["final_stop"]
    assert out["final_answers"] == ref["final_answers"]
    if ref["final_min_confs"] and ref["final_min_confs"][0] is not None:
        close(out["final_min_confs"], ref["final_min_confs"], atol=ROUNDED, what="final min_conf")
    assert sorted(out["voting_answers"]) == sorted(ref["voting_answers"])
    close(sorted(out["voting_weights"]), sorted(ref["voting_weights"]), atol=ROUNDED, what="voting weights")
    assert out["final_answer"] == ref["final_answer"]
    assert out["total_tokens"] == ref["total_tokens"]
    assert_voting_results(out["voting_results"], ref["voting_results"], atol=ROUNDED)


def assert_online_rules(out, percentile):
    bar = out["conf_bar"]
    # the threshold is the (100 - percentile)-th percentile of the warmup traces' lowest group confidence
    close(bar, np.percentile(out["warmup_min_confs"], 100 - percentile), what="conf_bar")
    for min_conf, stop, tokens in zip(out["final_min_confs"], out["final_stop"], out["final_tokens"]):
        assert (stop == "gconf_threshold") == (min_conf < bar), (min_conf, bar, stop)
        if min_conf >= bar:
            assert tokens >= GROUP
    # who votes: warmup traces at or above the threshold, final traces not stopped; weight = min_conf
    n_warm = len(out["warmup_min_confs"])
    assert len(out["voting_answers"]) == len(out["voting_weights"])
    for weight in out["voting_weights"]:
        assert weight >= bar - ROUNDED or n_warm == 0


def test_online_high(outputs, reference):
    assert_online_rules(outputs["online_high"], 90)
    assert_run_matches(outputs["online_high"], reference["online_high"])


def test_online_low(outputs, reference):
    out = outputs["online_low"]
    assert_online_rules(out, 10)
    assert "gconf_threshold" in out["final_stop"]
    assert_run_matches(out, reference["online_low"])


def test_online_percentiles(outputs, reference):
    for p in (25, 50, 75):
        assert_online_rules(outputs["online_percentiles"][str(p)], p)
        assert_run_matches(outputs["online_percentiles"][str(p)], reference["online_percentiles"][str(p)])


def test_offline(outputs, reference):
    out = outputs["offline"]
    assert out["conf_bar"] is None
    assert out["voting_weights"] == [1.0] * len(out["voting_answers"])
    assert_run_matches(out, reference["offline"])


# ---- the voting step of the online algorithm on given traces ---------------------------------------------


def test_basic_voting_online(outputs, reference):
    out = outputs["basic_voting_online"]
    # bar 6: warmup w0 (9.5), w2 (6.0), w5 (7.25) (w3 has no answer); final f0, f2, f4 (f1 stopped, f3 no answer)
    bar6 = out["bar_6"]
    assert sorted(bar6["voting_trace_ids"]) == ["f0", "f2", "f4", "w0", "w2", "w5"]
    assert multiset(bar6["answers"], bar6["weights"]) == multiset(
        ["7", "5", "7", "5", "7", "5"], [9.5, 6.0, 7.25, 8.5, 6.5, 6.0]
    )
    assert bar6["voted"] == "7"  # 7: 9.5 + 7.25 + 6.5 = 23.25; 5: 6.0 + 8.5 + 6.0 = 20.5
    bar9 = out["bar_9"]
    assert sorted(bar9["voting_trace_ids"]) == ["f0", "f2", "f4", "w0"]  # final traces are not re-filtered
    assert bar9["voted"] == "7"  # 7: 9.5 + 6.5; 5: 8.5 + 6.0
    bar0 = out["bar_0"]
    assert sorted(bar0["voting_trace_ids"]) == ["f0", "f2", "f4", "w0", "w1", "w2", "w4", "w5"]
    assert bar0["voted"] == "5"
    for key, want in reference["basic_voting_online"].items():
        assert sorted(out[key]["voting_trace_ids"]) == sorted(want["voting_trace_ids"]), key
        assert multiset(out[key]["answers"], out[key]["weights"]) == multiset(want["answers"], want["weights"]), key
        assert out[key]["voted"] == want["voted"], key


def test_basic_voting_offline(outputs, reference):
    out = outputs["basic_voting_offline"]
    assert sorted(out["answers"]) == sorted(["7", "5", "5", "5", "7", "5", "7", "7", "5"])
    assert out["weights"] == [1.0] * 9
    assert out["voted"] == "5"
    want = reference["basic_voting_offline"]
    assert sorted(out["answers"]) == sorted(want["answers"])
    assert out["voted"] == want["voted"]
