"""Helpers for the reinforce-ada checks: the paper's sampling procedure re-derived on counts
alone (numpy, independent of the code under test), the global-statistics baseline in
closed form, and the comparisons.

Tolerances:
- rewards pass through a float32 tensor in the code: compared with the tables at atol 1e-6;
- advantages are float32 (torch.mean / torch.std of 0/1 samples, one division): compared at
  rtol 1e-5, atol 1e-5 (values are at most ~4 in size, float32 rounding is ~1e-7 relative);
- reward_mean of a round is a float64 mean of float32 rewards: rtol 1e-9 against the reference.
"""

import math

import numpy as np

ADV_TOL = dict(rtol=1e-5, atol=1e-5)
EPS = 1e-6  # compute_grpo_outcome_advantage's default epsilon


def composition(pos, neg, n):
    """The group kept from pos correct and neg wrong responses: min(n, pos + neg) responses,
    as close to half correct, half wrong as the counts allow."""
    take = min(n, pos + neg)
    p = min(pos, n // 2)
    q = min(neg, take - p)
    p += min(pos - p, take - p - q)
    return p, q


def simulate(table, settings, choice):
    """Reinforce-Ada's rounds on a reward table: every active prompt gets round_repeat new
    responses a round; a prompt stops once it has n/2 correct and n/2 wrong responses
    (balanced) or one correct response (positive-focused); after max_rounds the rest keep
    what they have. Returns the kept composition, the counts seen and the rounds."""
    n, R, thr = settings["final_keep_per_prompt"], settings["round_repeat"], settings["positive_threshold"]
    pos = {u: 0 for u in table}
    neg = {u: 0 for u in table}
    gen = {u: 0 for u in table}
    kept, rounds, calls = {}, [], []
    active = list(table)
    for _ in range(settings["max_rounds"]):
        if not active:
            break
        completed, rewards = 0, []
        for u in active:
            new = [float(np.float32(x)) for x in table[u][gen[u] : gen[u] + R]]
            gen[u] += R
            rewards += new
            pos[u] += sum(x > thr for x in new)
            neg[u] += sum(not (x > thr) for x in new)
            done = pos[u] >= n // 2 and neg[u] >= n - n // 2 if choice == "balanced" else pos[u] >= 1
            if done:
                kept[u] = composition(pos[u], neg[u], n)
                completed += 1
        calls.append(R * len(active))
        rounds.append([len(active), completed, len(kept), float(np.mean(rewards))])
        active = [u for u in active if u not in kept]
    for u in active:
        kept[u] = composition(pos[u], neg[u], n)
    return {"kept": kept, "pos": pos, "neg": neg, "gen": gen, "rounds": rounds, "calls": calls}


def baseline_advantage(reward, pos, neg):
    """(reward - mean) / (std + eps) over pos ones and neg zeros (std with Bessel's correction,
    floored at eps)."""
    total = pos + neg
    if total <= 1:
        return reward
    mean = pos / total
    std = math.sqrt(pos * neg / (total * (total - 1)))
    return (reward - mean) / (max(std, EPS) + EPS)


def split_kept(out, u, thr):
    rewards = out["selected"].get(u, {"rewards": []})["rewards"]
    return sum(r > thr for r in rewards), sum(not (r > thr) for r in rewards)


def assert_sampling(out, table, settings, choice, what):
    """Everything the sampling loop must reproduce, against the re-derivation."""
    sim = simulate(table, settings, choice)
    thr = settings["positive_threshold"]
    assert sorted(out["pos_count"]) == sorted(table) and sorted(out["neg_count"]) == sorted(table), f"{what}: uids of the counts"
    for u in table:
        got = (out["pos_count"][u], out["neg_count"][u])
        assert got == (sim["pos"][u], sim["neg"][u]), f"{what}: {u} counted (correct, wrong) {got}, expected {(sim['pos'][u], sim['neg'][u])}"
    assert out["generated"] == sim["gen"], f"{what}: responses sampled per prompt {out['generated']} != {sim['gen']}"
    assert out["calls"] == sim["calls"], f"{what}: rows per rollout call {out['calls']} != {sim['calls']}"
    assert [r[:3] for r in out["rounds"]] == [r[:3] for r in sim["rounds"]], (
        f"{what}: rounds [active, completed, finished] {[r[:3] for r in out['rounds']]} != {[r[:3] for r in sim['rounds']]}"
    )
    np.testing.assert_allclose([r[3] for r in out["rounds"]], [r[3] for r in sim["rounds"]], rtol=1e-6, err_msg=f"{what}: reward means")
    assert sorted(out["selected"]) == sorted(table), f"{what}: prompts with a group {sorted(out['selected'])}"
    for u in table:
        sel = out["selected"][u]
        assert split_kept(out, u, thr) == sim["kept"][u], (
            f"{what}: {u} kept (correct, wrong) = {split_kept(out, u, thr)}, expected {sim['kept'][u]}"
        )
        ks = sel["k"]
        assert len(set(ks)) == len(ks) and all(0 <= k < sim["gen"][u] for k in ks), f"{what}: {u} kept responses {ks}"
        np.testing.assert_allclose(sorted(sel["rewards"]), sorted(table[u][k] for k in ks), atol=1e-6, err_msg=f"{what}: {u} rewards")
    # advantages: the baseline of the counts over the whole adaptive phase
    for u in table:
        got = out["advantages"][u]
        want = [[r, baseline_advantage(r, sim["pos"][u], sim["neg"][u])] for r, _ in got]
        np.testing.assert_allclose(np.array(got, dtype=float), np.array(want, dtype=float), **ADV_TOL, err_msg=f"{what}: {u} advantages")
    # each kept row carries its own prompt's context fields
    index = {u: i for i, u in enumerate(table)}
    for u, input_id, tag, extra in out["context_rows"]:
        assert (input_id, tag, extra) == (10 * index[u], 100.0 * index[u], index[u]), f"{what}: context of a row of {u}"


def assert_like_reference(out, ref, thr, what):
    """Same counts, rounds, calls and kept compositions as the reference (which responses are
    kept may differ); advantages are checked in closed form by assert_sampling."""
    for key in ("pos_count", "neg_count", "generated", "calls"):
        assert out[key] == ref[key], f"{what}: {key} {out[key]} != reference {ref[key]}"
    assert [r[:3] for r in out["rounds"]] == [r[:3] for r in ref["rounds"]], f"{what}: rounds"
    np.testing.assert_allclose([r[3] for r in out["rounds"]], [r[3] for r in ref["rounds"]], rtol=1e-9, err_msg=f"{what}: reward means")
    assert {u: split_kept(out, u, thr) for u in ref["selected"]} == {u: split_kept(ref, u, thr) for u in ref["selected"]}, f"{what}: kept"


def local_advantage(reward, kept, norm=True):
    """GRPO's own baseline: mean and std (Bessel) of the group's kept rewards; a group of one
    gets mean 0, std 1."""
    kept = np.asarray(kept, dtype=np.float64)
    mean, std = (0.0, 1.0) if len(kept) == 1 else (kept.mean(), kept.std(ddof=1))
    return (reward - mean) / (std + EPS) if norm else reward - mean


def global_advantage_no_std(reward, pos, neg):
    total = pos + neg
    return reward if total <= 1 else reward - pos / total
