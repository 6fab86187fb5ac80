"""Cases for Reinforce-Ada (arXiv 2510.04996): they run WITH the authors' code, in the run
sandbox, and return plain data (no assertion, no expected value here).

RayPPOTrainer._generate_multi_round_adaptive_downsampling runs as written, with a scripted
rollout worker and reward function in place of the LLM and the verifier: the worker
numbers the responses of each uid 0, 1, 2, ... in the order it receives the rows, and
the reward of response k of a uid is inputs/_ra_inputs.py's table[uid][k]. The advantages
come from core_algos.compute_grpo_outcome_advantage with the global statistics that the
sampling loop leaves in meta_info (as ray_trainer.compute_advantage passes them).

Which responses of a uid are kept is not returned (only their number, signs and rewards):
the paper does not fix which of the collected correct (or wrong) responses form the group.
"""

from collections import defaultdict

import numpy as np
import torch

from _ra_inputs import ADV_HAND, GRADED_TABLE, HAND, HAND_TABLE, adv_random, random_setting

from verl import DataProto  # noqa: E402
from verl.trainer.config import AlgoConfig  # noqa: E402
from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage  # noqa: E402
from verl.trainer.ppo.ray_trainer import RayPPOTrainer  # noqa: E402

torch.set_num_threads(1)


class Config(dict):
    """An attribute-and-get dict, as the trainer reads its OmegaConf config."""

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as e:
            raise AttributeError(key) from e


class ScriptedRollout:
    """Stands in for the actor rollout worker group: one response per input row."""

    dp_size = 1  # no padding rows (they would be numbered like real responses)

    def __init__(self, uid_index):
        self.uid_index = uid_index
        self.count = defaultdict(int)
        self.calls = []

    def generate_sequences(self, round_inp):
        uids = list(round_inp.non_tensor_batch["uid"])
        rows = []
        for u in uids:
            rows.append([self.uid_index[u], self.count[u]])
            self.count[u] += 1
        self.calls.append(len(uids))
        responses = torch.tensor(rows, dtype=torch.long)
        return DataProto({"responses": responses, "response_mask": torch.ones(len(rows), 2)})


class ScriptedReward:
    """Stands in for the reward manager: the reward of response k of a uid, at the last token."""

    reward_fn_key = "data_source"

    def __init__(self, table, uids):
        self.table = table
        self.uids = uids

    def __call__(self, data, return_dict=False):
        responses = data.batch["responses"]
        rewards = [self.table[self.uids[int(p)]][int(k)] for p, k in responses.tolist()]
        tensor = torch.zeros(len(rewards), 2)
        tensor[:, -1] = torch.tensor(rewards, dtype=torch.float32)
        if return_dict:
            return {"reward_tensor": tensor, "reward_extra_info": {"acc": list(rewards)}}
        return tensor


def prompt_batches(uids):
    index = np.arange(len(uids))
    non_tensor = {
        "uid": np.array(uids, dtype=object),
        "data_source": np.array(["scripted"] * len(uids), dtype=object),
        "reward_model": np.array([{"ground_truth": str(i)} for i in index], dtype=object),
    }
    prompts = DataProto({"input_ids": torch.tensor(index[:, None] * 10 + np.arange(3))}, dict(non_tensor))
    context = DataProto(
        {"input_ids": torch.tensor(index[:, None] * 10 + np.arange(3)), "prompt_tag": torch.tensor(index * 100.0)},
        {**non_tensor, "extra_info": np.array([{"index": int(i)} for i in index], dtype=object)},
    )
    return prompts, context


def advantages_by_uid(uids, rewards, advantages):
    """uid -> sorted [[reward, advantage], ...] (row order and which rows are kept are free)."""
    out = defaultdict(list)
    for u, r, a in zip(uids, rewards, advantages):
        out[str(u)].append([float(r), float(a)])
    return {u: sorted(v) for u, v in out.items()}


def run_sampling(table, settings, choice, async_reward=False):
    uids = list(table)
    uid_index = {u: i for i, u in enumerate(uids)}
    prompts, context = prompt_batches(uids)
    trainer = RayPPOTrainer.__new__(RayPPOTrainer)
    trainer.actor_rollout_wg = ScriptedRollout(uid_index)
    trainer.async_rollout_mode = False
    trainer.reward_fn = ScriptedReward(table, uids)
    trainer.use_rm = False
    trainer.rm_wg = None
    trainer.kl_ctrl_in_reward = None
    trainer.config = Config(
        algorithm=Config(reinforce_ada_choice=choice, use_kl_in_reward=False, kl_penalty="kl"),
        reward_model=Config(launch_reward_fn_async=async_reward),
    )
    final, rounds_info = trainer._generate_multi_round_adaptive_downsampling(
        orig_prompt_batch=prompts, timing_raw={}, context_batch=context, **settings
    )

    row_uids = [str(u) for u in final.non_tensor_batch["uid"]]
    responses = final.batch["responses"].tolist()
    scores = final.batch["token_level_scores"].sum(-1).tolist()
    selected = defaultdict(lambda: {"k": [], "rewards": []})
    for u, (p, k), s in zip(row_uids, responses, scores):
        selected[u]["k"].append(int(k) if uids[int(p)] == u else -1)  # -1: a response of another uid
        selected[u]["rewards"].append(float(s))
    selected = {u: {"k": sorted(v["k"]), "rewards": sorted(v["rewards"])} for u, v in selected.items()}

    # context fields follow their rows
    context_rows = sorted(
        [u, int(final.batch["input_ids"][i, 0]), float(final.batch["prompt_tag"][i]), int(final.non_tensor_batch["extra_info"][i]["index"])]
        for i, u in enumerate(row_uids)
    )

    pos_count = final.meta_info["grpo_uid_to_pos_count"]
    neg_count = final.meta_info["grpo_uid_to_neg_count"]
    adv, _ = compute_grpo_outcome_advantage(
        token_level_rewards=final.batch["token_level_rewards"],
        response_mask=final.batch["response_mask"],
        index=final.non_tensor_batch["uid"],
        config=AlgoConfig(global_stat_est=True),
        grpo_uid_to_pos_count=pos_count,
        grpo_uid_to_neg_count=neg_count,
    )
    return {
        "selected": selected,
        "pos_count": {str(u): int(c) for u, c in pos_count.items()},
        "neg_count": {str(u): int(c) for u, c in neg_count.items()},
        "rounds": [
            [int(i["active_prompts"]), int(i["completed"]), int(i["finished_prompts"]), float(i.get("reward_mean", 0.0))]
            for i in rounds_info["per_round"]
        ],
        "generated": {str(u): int(c) for u, c in trainer.actor_rollout_wg.count.items()},
        "calls": list(trainer.actor_rollout_wg.calls),
        "context_rows": context_rows,
        "advantages": advantages_by_uid(row_uids, scores, adv[:, -1].tolist()),
    }


# ---- the sampling loop: hand-worked tables ----------------------------------------------


def case_balanced_hand():
    return run_sampling(HAND_TABLE, HAND, "balanced")


def case_positive_hand():
    return run_sampling(HAND_TABLE, HAND, "positive_focused")


def case_balanced_graded():
    return run_sampling(GRADED_TABLE, HAND, "balanced")


# ---- the sampling loop: seeded tables ---------------------------------------------------


def case_balanced_random():
    table, settings = random_setting("small")
    return run_sampling(table, settings, "balanced")


def case_positive_random():
    table, settings = random_setting("small")
    return run_sampling(table, settings, "positive_focused")


def case_positive_random_wide():
    table, settings = random_setting("wide")
    return run_sampling(table, settings, "positive_focused")


def case_balanced_random_wide():
    table, settings = random_setting("wide")
    return run_sampling(table, settings, "balanced")


def case_balanced_random_large():
    table, settings = random_setting("large")
    return run_sampling(table, settings, "balanced", async_reward=True)


def case_positive_random_large():
    table, settings = random_setting("large")
    return run_sampling(table, settings, "positive_focused", async_reward=True)


# ---- the global-statistics baseline on its own ------------------------------------------


def run_advantage(groups, order=None, config=None, counts=True, norm=True):
    uids, rewards = [], []
    for u, (_, _, kept) in groups.items():
        uids += [u] * len(kept)
        rewards += kept
    if order is not None:
        uids = [uids[i] for i in order]
        rewards = [rewards[i] for i in order]
    token_level_rewards = torch.zeros(len(rewards), 3)
    token_level_rewards[:, 1] = torch.tensor(rewards)
    response_mask = torch.ones(len(rewards), 3)
    response_mask[:, 2] = 0.0
    adv, returns = compute_grpo_outcome_advantage(
        token_level_rewards=token_level_rewards,
        response_mask=response_mask,
        index=np.array(uids, dtype=object),
        norm_adv_by_std_in_grpo=norm,
        config=AlgoConfig(global_stat_est=True) if config is None else config,
        grpo_uid_to_pos_count={u: g[0] for u, g in groups.items()} if counts else None,
        grpo_uid_to_neg_count={u: g[1] for u, g in groups.items()} if counts else None,
    )
    return {"uids": uids, "rewards": rewards, "advantages": adv.numpy(), "returns": returns.numpy()}


def case_advantage_hand():
    return run_advantage(ADV_HAND)


def case_advantage_random():
    groups, order = adv_random()
    return run_advantage(groups, order)


def case_advantage_variants():
    """The same groups under the other settings of compute_grpo_outcome_advantage: without
    std normalisation; global statistics switched off (the group's own rewards); switched
    on but no counts given; one group of a single response."""
    groups, order = adv_random()
    groups = dict(groups, solo=(3, 1, [1.0]))
    order = order + [len(order)]
    return {
        "no_std": run_advantage(groups, order, norm=False),
        "local": run_advantage(groups, order, config=AlgoConfig(global_stat_est=False)),
        "no_counts": run_advantage(groups, order, counts=False),
        "local_no_std": run_advantage(groups, order, config=AlgoConfig(), norm=False),
    }
