import numpy as np
from abc import ABC, abstractmethod
from typing import Optional, Union, Sequence, List, Any, Dict
from scipy.special import logsumexp
import pickle
from pathlib import Path

Arm = Union[int, str]
Subset = Optional[Union[np.ndarray, Sequence[Arm]]]


def _logadd(x_log, y_log, w1=1.0, w2=1.0):
    x = np.asarray(x_log, dtype=float) + np.log(w1)
    y = np.asarray(y_log, dtype=float) + np.log(w2)
    a = np.stack([x, y], axis=0)
    return logsumexp(a, axis=0)


def _logdiffexp(a_log, b_log):
    a = np.asarray(a_log, float)
    b = np.asarray(b_log, float)
    d = a - b
    with np.errstate(over="ignore", invalid="ignore"):
        v = a + np.log1p(-np.exp(-d))
    return np.where(d >= 0, v, -np.inf)


def _logexpm1(z):
    z = np.asarray(z, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(z > 50.0, z, np.log(np.expm1(z)))


class BanditBase(ABC):
    def __init__(
        self,
        n_arms: Optional[int] = None,
        seed: Optional[int] = None,
        arm_names: Optional[List[str]] = None,
        auto_decay: Optional[float] = None,
        shift_by_baseline: bool = True,
        shift_by_parent: bool = True,
    ):
        self.rng = np.random.default_rng(seed)

        if arm_names is None and n_arms is None:
            raise ValueError("provide n_arms or arm_names")
        if arm_names is not None:
            if n_arms is not None and int(n_arms) != len(arm_names):
                raise ValueError("len(arm_names) must equal n_arms")
            self._arm_names = list(arm_names)
            self._name_to_idx = {n: i for i, n in enumerate(self._arm_names)}
            self._n_arms = len(self._arm_names)
        else:
            self._arm_names = None
            self._name_to_idx = {}
            self._n_arms = int(n_arms)

        self._baseline = 0.0
        self._shift_by_baseline = bool(shift_by_baseline)
        self._shift_by_parent = bool(shift_by_parent)
        if auto_decay is not None and not (0.0 < auto_decay <= 1.0):
            raise ValueError("auto_decay must be in (0, 1]")
        self._auto_decay = auto_decay

    @property
    def n_arms(self) -> int:
        return self._n_arms

    def set_baseline_score(
        self,
        baseline: float,
    ) -> None:
        self._baseline = float(baseline)

    def _resolve_arm(self, arm: Arm) -> int:
        # allows updating by int index or string name
        if isinstance(arm, int):
            return int(arm)
        if self._arm_names is None:
            try:
                return int(arm)
            except Exception as e:
                raise ValueError("string arm requires arm_names") from e
        if arm not in self._name_to_idx:
            raise ValueError(f"unknown arm name '{arm}'")
        return self._name_to_idx[arm]

    def _resolve_subset(self, subset: Subset) -> np.ndarray:
        if subset is None:
            return np.arange(self.n_arms, dtype=np.int64)
        if isinstance(subset, np.ndarray) and np.issubdtype(subset.dtype, np.integer):
            return subset.astype(np.int64)
        idxs = [self._resolve_arm(a) for a in subset]
        return np.asarray(idxs, dtype=np.int64)

    def _maybe_decay(self) -> None:
        if self._auto_decay is not None:
            self.decay(self._auto_decay)

    @abstractmethod
    def update_submitted(
        self,
        arm: Arm,
    ) -> float:
        raise NotImplementedError

    @abstractmethod
    def update(
        self,
        arm: Arm,
        reward: Optional[float],
        baseline: Optional[float] = None,
    ) -> None:
        raise NotImplementedError

    def update_cost(
        self,
        arm: Arm,
        cost: float,
    ) -> float:
        # optional method to update cost associated with an arm
        return 0.0

    @abstractmethod
    def posterior(
        self,
        subset: Subset = None,
        samples: Optional[int] = None,
        **kwargs: Any,
    ) -> np.ndarray:
        raise NotImplementedError

    def select_llm(
        self,
        subset: Subset = None,
        samples: Optional[int] = None,
        **kwargs: Any,
    ) -> tuple[np.ndarray, np.ndarray]:
        # return one hot vector of selection probabilities per arm after
        # sampling from posterior
        probabilities = self.posterior(subset=subset, samples=samples, **kwargs)
        one_hot = np.zeros(self.n_arms, dtype=np.float64)
        samples = self.rng.choice(
            self.n_arms,
            size=1,
            p=probabilities,
        )
        one_hot[samples[0]] = 1.0
        return one_hot, probabilities

    @abstractmethod
    def decay(self, factor: float) -> None:
        raise NotImplementedError

    @abstractmethod
    def get_state(self) -> Dict[str, Any]:
        """Get the internal state of the bandit for serialization."""
        raise NotImplementedError

    @abstractmethod
    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore the internal state of the bandit from serialization."""
        raise NotImplementedError

    def save_state(self, path: Union[str, Path]) -> None:
        """Save bandit state to a pickle file."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        state = self.get_state()
        with open(path, "wb") as f:
            pickle.dump(state, f)

    def load_state(self, path: Union[str, Path]) -> None:
        """Load bandit state from a pickle file."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"Bandit state file not found: {path}")
        with open(path, "rb") as f:
            state = pickle.load(f)
        self.set_state(state)

    def _state_arm_names(self) -> Optional[List[str]]:
        if self._arm_names is None:
            return None
        return list(self._arm_names)

    def _align_state_array(
        self,
        state: Dict[str, Any],
        key: str,
        default: np.ndarray,
    ) -> np.ndarray:
        if key not in state:
            return default.copy()

        saved = np.asarray(state[key], dtype=default.dtype)
        if saved.ndim != 1:
            raise ValueError(f"bandit state field '{key}' must be one-dimensional")

        aligned = default.copy()
        saved_arm_names = state.get("arm_names")
        if saved_arm_names is not None and self._arm_names is not None:
            saved_name_to_idx = {
                name: i for i, name in enumerate(saved_arm_names) if i < saved.size
            }
            for i, name in enumerate(self._arm_names):
                saved_i = saved_name_to_idx.get(name)
                if saved_i is not None:
                    aligned[i] = saved[saved_i]
            return aligned

        n = min(saved.size, aligned.size)
        if n > 0:
            aligned[:n] = saved[:n]
        return aligned

    def _state_arm_layout_matches(self, state: Dict[str, Any], key: str) -> bool:
        saved_arm_names = state.get("arm_names")
        if saved_arm_names is not None and self._arm_names is not None:
            return list(saved_arm_names) == self._arm_names
        if key not in state:
            return True
        return np.asarray(state[key]).size == self.n_arms

    def _restore_observation_range(self, state: Dict[str, Any]) -> None:
        if self._state_arm_layout_matches(state, "s"):
            self._obs_max = state["obs_max"]
            self._obs_min = state["obs_min"]
            return

        seen = self.divs > 0.0
        means = self._mean()[seen]
        finite_means = means[np.isfinite(means)]

        if self.asymmetric_scaling:
            if self.use_exponential_scaling:
                self._obs_min = -np.inf
                self._obs_max = (
                    float(finite_means.max()) if finite_means.size > 0 else -np.inf
                )
            else:
                self._obs_min = 0.0
                self._obs_max = (
                    max(0.0, float(finite_means.max()))
                    if finite_means.size > 0
                    else 0.0
                )
            return

        self._obs_max = float(finite_means.max()) if finite_means.size > 0 else -np.inf
        self._obs_min = float(finite_means.min()) if finite_means.size > 0 else np.inf


class AsymmetricUCB(BanditBase):
    # asymmetric ucb1 with ε-exploration and adaptive scaling
    def __init__(
        self,
        n_arms: Optional[int] = None,
        seed: Optional[int] = None,
        exploration_coef: float = 1.0,
        epsilon: float = 0.2,
        arm_names: Optional[List[str]] = None,
        auto_decay: Optional[float] = 0.95,
        shift_by_baseline: bool = True,
        shift_by_parent: bool = True,
        adaptive_scale: bool = True,
        asymmetric_scaling: bool = True,
        exponential_base: Optional[float] = 1.0,
        cost_aware_coef: float = 0.0,
        cost_exploration_coef: Optional[float] = 0.1,
        cost_power: float = 1.0,
        cost_ref_percentile: float = 50.0,
    ):
        super().__init__(
            n_arms=n_arms,
            seed=seed,
            arm_names=arm_names,
            auto_decay=auto_decay,
            shift_by_baseline=shift_by_baseline,
            shift_by_parent=shift_by_parent,
        )
        if asymmetric_scaling:
            assert shift_by_baseline or shift_by_parent, (
                "asymmetric scaling requires at least one of "
                "shift_by_baseline or shift_by_parent to be True"
            )
        if not (0.0 <= epsilon <= 1.0):
            raise ValueError("epsilon must be in [0, 1]")
        if not (0.0 <= cost_aware_coef <= 1.0):
            raise ValueError("cost_aware_coefficient must be in [0, 1]")
        if cost_power <= 0.0:
            raise ValueError("cost_power must be > 0")
        if not (0.0 <= cost_ref_percentile <= 100.0):
            raise ValueError("cost_ref_percentile must be in [0, 100]")
        self.c = float(exploration_coef)
        self.epsilon = float(epsilon)
        self.adaptive_scale = bool(adaptive_scale)
        self.asymmetric_scaling = bool(asymmetric_scaling)
        self.exponential_base = exponential_base
        self.cost_aware_coefficient = float(cost_aware_coef)
        self.cost_power = float(cost_power)
        self.cost_ref_percentile = float(cost_ref_percentile)
        if cost_exploration_coef is None:
            self.cost_exploration_coef = self.c
        else:
            self.cost_exploration_coef = float(cost_exploration_coef)

        self.use_exponential_scaling = self.exponential_base is not None

        # if none, no exponential scaling
        if self.exponential_base is not None:
            assert self.exponential_base > 0.0, "exponential_base must be > 0"
            self.exponential_base = float(exponential_base)

        n = self.n_arms
        self.n_submitted = np.zeros(n, dtype=np.float64)
        self.n_completed = np.zeros(n, dtype=np.float64)
        self.n_costs = np.zeros(n, dtype=np.float64)
        self.total_costs = np.zeros(n, dtype=np.float64)
        if self.use_exponential_scaling:
            self.s = np.full(n, -np.inf, dtype=np.float64)
        else:
            self.s = np.zeros(n, dtype=np.float64)
        self.divs = np.zeros(n, dtype=np.float64)

        if self.asymmetric_scaling:
            if self.use_exponential_scaling:
                self._obs_max = -np.inf
                self._obs_min = -np.inf
            else:
                self._obs_min = 0.0
                self._obs_max = 0.0
        else:
            self._obs_max = -np.inf
            self._obs_min = np.inf

        self.max_cost_observed = -np.inf
        self.min_cost_observed = np.inf

    @property
    def n(self) -> np.ndarray:
        return np.maximum(self.n_submitted, self.n_completed)

    def _add_to_reward(self, r: float, value: float, coeff_r=1, coeff_value=1) -> float:
        if self.use_exponential_scaling:
            out, sign = logsumexp(
                [r, value],
                b=[coeff_r, coeff_value],
                return_sign=True,
            )
        else:
            out = coeff_r * r + coeff_value * value
        return out

    def _multiply_reward(self, r: float, value: float) -> float:
        if self.use_exponential_scaling:
            assert value > 0, "Multipliers in log space must be > 0"
            out = r + np.log(value)
        else:
            out = r * value
        return out

    # <paper2code name="bandit means, observed range, imputation and normalization">
    def _mean(self) -> np.ndarray:
        denom = np.maximum(self.divs, 1e-7)
        if self.use_exponential_scaling:
            return self.s - np.log(denom)
        else:
            return self.s / denom

    def _update_obs_range(self, r: float) -> None:
        if r > self._obs_max:
            self._obs_max = r
        if not (self.use_exponential_scaling and self.asymmetric_scaling):
            if r < self._obs_min:
                self._obs_min = r

    def _have_obs_range(self) -> bool:
        if self.use_exponential_scaling and self.asymmetric_scaling:
            return np.isfinite(self._obs_max)
        return (
            np.isfinite(self._obs_min)
            and np.isfinite(self._obs_max)
            and (self._obs_max - self._obs_min) > 0.0
        )

    def _impute_worst_reward(self) -> float:
        if self.asymmetric_scaling:
            return -np.inf if self.use_exponential_scaling else 0.0

        seen = self.n > 0
        if not np.any(seen):
            return 0.0

        denom = np.maximum(self.divs[seen], 1e-7)
        mu = self.s[seen] / denom
        mu_min = float(mu.min())
        if mu.size >= 2:
            s = float(mu.std(ddof=1))
            sigma = 1.0 if (not np.isfinite(s) or s <= 0.0) else s
        else:
            sigma = 1.0
        return mu_min - sigma

    def _normalized_means(self, idx):
        if not self.adaptive_scale or not self._have_obs_range():
            m = self._mean()[idx]
            return np.exp(m) if self.use_exponential_scaling else m
        elif self.use_exponential_scaling and self.asymmetric_scaling:
            mlog = self._mean()[idx]
            return np.exp(mlog - self._obs_max)
        elif self.use_exponential_scaling:
            means_log = self._mean()[idx]
            rng_log = _logdiffexp(self._obs_max, self._obs_min)
            num_log = _logdiffexp(means_log, self._obs_min)
            return np.exp(num_log - rng_log)
        else:
            means = self._mean()[idx]
            rng = max(self._obs_max - self._obs_min, 1e-9)
            return (means - self._obs_min) / rng
    # </paper2code name="bandit means, observed range, imputation and normalization">

    def update_submitted(
        self,
        arm: Arm,
    ) -> float:
        arm = self._resolve_arm(arm)
        self.n_submitted[arm] += 1.0
        return self.n[arm]

    def update(self, arm, reward, baseline=None):
        i = self._resolve_arm(arm)
        # <paper2code name="bandit reward update">
        is_real = reward is not None
        r_raw = float(reward) if is_real else self._impute_worst_reward()

        if self._shift_by_parent and self._shift_by_baseline:
            baseline = (
                self._baseline if baseline is None else max(baseline, self._baseline)
            )
        elif self._shift_by_baseline:
            baseline = self._baseline
        elif not self._shift_by_parent:
            baseline = 0.0
        if baseline is None:
            raise ValueError("baseline required when shifting is active")

        r = r_raw - baseline

        if self.asymmetric_scaling:
            r = max(r, 0.0)

        self.divs[i] += 1.0
        self.n_completed[i] += 1.0

        if self.use_exponential_scaling and self.asymmetric_scaling:
            z = r * self.exponential_base
            if self._shift_by_baseline:
                contrib_log = _logexpm1(z)
            else:
                contrib_log = z
            self.s[i] = _logadd(self.s[i], contrib_log)
            if self.adaptive_scale and is_real:
                self._update_obs_range(contrib_log)
        else:
            self.s[i] += r
            if self.adaptive_scale and is_real:
                self._update_obs_range(r)

        self._maybe_decay()
        return r, baseline
        # </paper2code name="bandit reward update">

    def update_cost(
        self,
        arm: Arm,
        cost: float,
    ) -> float:
        i = self._resolve_arm(arm)
        c = float(cost)
        self.total_costs[i] += c
        self.n_costs[i] += 1.0

        if c > self.max_cost_observed:
            self.max_cost_observed = c
        if c < self.min_cost_observed:
            self.min_cost_observed = c

        return c

    def _normalized_cost_ratio(
        self,
        idx: np.ndarray,
        num: float,
        n_cost_bonus: Optional[np.ndarray] = None,
        denom_floor_min: float = 1e-7,
    ) -> Optional[np.ndarray]:
        if not (
            np.isfinite(self.max_cost_observed) and np.isfinite(self.min_cost_observed)
        ):
            return None
        if self.max_cost_observed < self.min_cost_observed:
            return None

        n_cost = np.maximum(self.n_costs[idx], 1.0)
        mean_costs = self.total_costs[idx] / n_cost

        cost_range = self.max_cost_observed - self.min_cost_observed

        if n_cost_bonus is None:
            n_cost_bonus = n_cost

        # optimistic "cheapness": use a lower confidence bound on cost
        cost_bonus = (
            self.cost_exploration_coef * cost_range * np.sqrt(num / n_cost_bonus)
        )

        # use small floor to prevent division by zero, but don't artificially
        # equalize costs by using min_cost_observed as floor
        denom_floor = denom_floor_min
        cost_denom = np.maximum(mean_costs - cost_bonus, denom_floor)

        have_cost = self.n_costs[idx] > 0.0

        # use percentile of observed costs as reference to avoid imbalance when
        # interpolating between reward-only and reward/cost scaling
        # higher percentile (e.g. 100=max) more aggressively favors cheap models
        if np.any(have_cost):
            cost_ref = float(
                np.percentile(mean_costs[have_cost], self.cost_ref_percentile)
            )
        else:
            cost_ref = denom_floor
        cost_ref = max(cost_ref, denom_floor)

        return cost_ref / cost_denom

    def _restore_cost_range(self, state: Dict[str, Any]) -> None:
        if (
            self._state_arm_layout_matches(state, "n_costs")
            and "min_cost_observed" in state
            and "max_cost_observed" in state
        ):
            self.min_cost_observed = float(state["min_cost_observed"])
            self.max_cost_observed = float(state["max_cost_observed"])
            return

        have_cost = self.n_costs > 0.0
        if not np.any(have_cost):
            self.min_cost_observed = np.inf
            self.max_cost_observed = -np.inf
            return

        mean_costs = self.total_costs[have_cost] / self.n_costs[have_cost]
        finite_costs = mean_costs[np.isfinite(mean_costs)]
        if finite_costs.size == 0:
            self.min_cost_observed = np.inf
            self.max_cost_observed = -np.inf
            return

        self.min_cost_observed = float(finite_costs.min())
        self.max_cost_observed = float(finite_costs.max())

    def posterior(self, subset=None, samples=None):
        idx = self._resolve_subset(subset)
        if samples is None or int(samples) <= 1:
            # <paper2code name="UCB scores">
            n_sub = self.n[idx]
            probs = np.zeros(self._n_arms, dtype=np.float64)

            # Handle empty subset
            if idx.size == 0:
                return probs

            if np.all(n_sub <= 0.0):
                p = np.ones(idx.size) / idx.size
                probs[idx] = p
                return probs

            unseen = np.where(n_sub <= 0.0)[0]
            if unseen.size > 0:
                p = np.ones(unseen.size) / unseen.size
                probs[idx[unseen]] = p
                return probs

            t = float(self.n.sum())
            base = self._normalized_means(idx)
            num = 2.0 * np.log(max(t, 2.0))
            base_bonus = np.sqrt(num / n_sub)
            bonus = self.c * base_bonus
            scores = base + bonus
            # </paper2code name="UCB scores">

            if self.cost_aware_coefficient > 0.0:
                cost_ratio = self._normalized_cost_ratio(idx, num)
                if cost_ratio is not None:
                    # normalize cost_ratio to [0, 1] for stable additive blending
                    cost_ratio_max = np.maximum(cost_ratio.max(), 1e-9)
                    cost_ratio_norm = cost_ratio / cost_ratio_max
                    # apply cost_power to amplify cost differences
                    # power > 1 more aggressively favors cheap models
                    cost_ratio_scaled = np.power(cost_ratio_norm, self.cost_power)
                    # additive blend: at k=1, only cost matters; at k=0, only reward
                    k = self.cost_aware_coefficient
                    scores = (1.0 - k) * scores + k * cost_ratio_scaled

            # <paper2code name="epsilon-greedy split">
            winners = np.where(scores == scores.max())[0]
            rem = idx.size - winners.size
            p_sub = np.zeros(idx.size, dtype=np.float64)
            if rem == 0:
                p_sub[:] = 1.0 / idx.size
            else:
                p_sub[winners] = (1.0 - self.epsilon) / winners.size
                mask = np.ones(idx.size, dtype=bool)
                mask[winners] = False
                p_sub[mask] = self.epsilon / rem
            probs[idx] = p_sub
            return probs
            # </paper2code name="epsilon-greedy split">
        else:
            return self._posterior_batch(idx, samples)

    def decay(self, factor: float) -> None:
        if not (0.0 < factor <= 1.0):
            raise ValueError("factor must be in (0, 1]")
        self.divs = self.divs * factor
        one_minus_factor = 1.0 - factor
        if self.use_exponential_scaling and self.asymmetric_scaling:
            # shrink in exp space to match original score scale
            s = self.s
            with np.errstate(divide="ignore", invalid="ignore"):
                log1p_term = np.where(
                    s > 0.0,
                    s + np.log(one_minus_factor + np.exp(-s)),
                    np.log1p(one_minus_factor * np.exp(s)),
                )
                self.s = s + np.log(factor) - log1p_term

            if self.adaptive_scale and np.isfinite(self._obs_max):
                means_log = self._mean()
                mmax = float(np.max(means_log))
                om = self._obs_max
                log1p_obs = (
                    om + np.log(one_minus_factor + np.exp(-om))
                    if om > 0.0
                    else np.log1p(one_minus_factor * np.exp(om))
                )
                obs_new = om + np.log(factor) - log1p_obs
                self._obs_max = max(obs_new, mmax)
        else:
            self.s = self.s * factor
            if self.adaptive_scale and self._have_obs_range():
                means = self._mean()
                self._obs_max = max(
                    self._obs_max * factor + one_minus_factor * np.max(means),
                    np.max(means),
                )
                self._obs_min = min(
                    self._obs_min * factor + one_minus_factor * np.min(means),
                    np.min(means),
                )

    def get_state(self) -> Dict[str, Any]:
        """Get the internal state for serialization."""
        return {
            "arm_names": self._state_arm_names(),
            "n_submitted": self.n_submitted.copy(),
            "n_completed": self.n_completed.copy(),
            "s": self.s.copy(),
            "divs": self.divs.copy(),
            "baseline": self._baseline,
            "obs_max": self._obs_max,
            "obs_min": self._obs_min,
            "n_costs": self.n_costs.copy(),
            "total_costs": self.total_costs.copy(),
            "min_cost_observed": self.min_cost_observed,
            "max_cost_observed": self.max_cost_observed,
        }

    def set_state(self, state: Dict[str, Any]) -> None:
        """Restore the internal state from serialization."""
        self.n_submitted = self._align_state_array(
            state, "n_submitted", self.n_submitted
        )
        self.n_completed = self._align_state_array(
            state, "n_completed", self.n_completed
        )
        self.s = self._align_state_array(state, "s", self.s)
        self.divs = self._align_state_array(state, "divs", self.divs)
        self._baseline = state["baseline"]
        self._restore_observation_range(state)
        self.n_costs = self._align_state_array(state, "n_costs", self.n_costs)
        self.total_costs = self._align_state_array(
            state, "total_costs", self.total_costs
        )
        self._restore_cost_range(state)
