# Stand-in written for the rcb task "reinforce-ada": NOT the authors' code (see notes.md).
# verl/trainer/ppo/reward.py loads reward managers (tokenizers, math verifiers); the task
# needs only compute_reward and compute_reward_async as the trainer calls them: a reward
# function called with return_dict=True, giving the token-level reward tensor and extra info.
import ray


def compute_reward(data, reward_fn):
    reward_result = reward_fn(data, return_dict=True)
    return reward_result["reward_tensor"], reward_result.get("reward_extra_info", {})


@ray.remote(num_cpus=1)
def compute_reward_async(data, config=None, tokenizer=None, reward_fn=None):
    return compute_reward(data, reward_fn)
