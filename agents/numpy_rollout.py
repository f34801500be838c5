"""The rollouts' forward pass of a set-network MaskablePPO policy in numpy (training option).

During a rollout the policy only samples: for a batch of B observations (one per training env)
it needs each action's log-probability and each observation's value, no gradient. Torch spends
~0.6 ms on that for B = 4 (about a hundred small operations, each with its own overhead), a
third of a training step. :class:`NumpyActorCritic` computes the same in numpy, batched, from the
torch policy's current weights (read again whenever an optimiser step changed them): the set
network's actor (as :mod:`mrsched_gym.agents.numpy_policy`), the value MLP, and the masked
log-probabilities of sb3-contrib's ``MaskableCategorical`` (:meth:`NumpyActorCritic.sample`
draws the actions from its own generator, seeded from torch's when it is made).

The floats differ from torch's in the last bits (another BLAS, another order of the sums), so a
run with ``rollouts: numpy`` is deterministic but not bit-identical to a run with torch's
rollouts; the PPO updates are torch's either way.
"""

from __future__ import annotations

import numpy as np

from mrsched_gym.agents.numpy_policy import (
    DECISION_NODE_FEATURE,
    ILLEGAL_LOGIT,
    NODE_SPEED_FEATURE,
    VALID_FEATURE,
)
from mrsched_gym.encoding import decision_kind_slot
from mrsched_gym.sim.decision import SCHEDULE

_SCHEDULE = decision_kind_slot(SCHEDULE)       # the schedule entry of obs["decision"]
#: The activations of the value MLP that have a numpy counterpart (SB3's ``activation_fn``).
ACTIVATIONS = {"Tanh": np.tanh, "ReLU": lambda x: np.maximum(x, 0.0, out=x)}


def _symlog(x: np.ndarray) -> np.ndarray:
    return np.copysign(np.log1p(np.abs(x)), x)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0, out=x)


def _log_normalise(x: np.ndarray) -> np.ndarray:
    """``x - logsumexp(x)`` over the last axis."""
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


class NumpyActorCritic:
    """The set-network policy's sampling forward pass in numpy (see the module docstring).

    Args:
        policy: A :class:`~mrsched_gym.agents.networks.SetPolicy` (torch) with a shared
            feature extractor; its weights are copied (call :meth:`sync` after they change).

    Raises:
        ValueError: The value MLP has an activation without a numpy counterpart.
    """

    def __init__(self, policy) -> None:
        fx = policy.features_extractor
        self.node_mask = bool(fx.node_mask)
        self.objective = int(fx.objective_features)
        self.work_conserving = bool(policy.action_net.work_conserving)
        self.hidden = fx.hidden
        self.activations = []
        for m in policy.mlp_extractor.value_net:
            name = type(m).__name__
            if name != "Linear" and name not in ACTIVATIONS:
                raise ValueError(f"no numpy counterpart of the value MLP's {name}")
            self.activations.append(name)
        import torch as th
        self.policy = policy
        self.rng = np.random.default_rng(int(th.randint(0, 2 ** 62, ())))   # seeded run: same
        self.params = list(policy.parameters())
        self.version = None
        self.sync()

    def weights_version(self) -> int:
        """A number that changes whenever a parameter is changed in place (optimiser steps,
        ``load_state_dict``): the sum of the parameters' version counters."""
        return sum(p._version for p in self.params)

    def sync(self) -> None:
        """Copy the torch policy's weights if they changed since the last copy."""
        version = self.weights_version()
        if version == self.version:
            return
        sd = {k: v.detach().cpu().numpy().astype(np.float32)
              for k, v in self.policy.state_dict().items()}
        h = self.hidden

        def affine(key: str) -> tuple[np.ndarray, np.ndarray]:
            return np.ascontiguousarray(sd[f"{key}.weight"].T), sd[f"{key}.bias"]

        fx = "features_extractor."
        self.node = [affine(fx + "node_enc.0"), affine(fx + "node_enc.2")]
        self.glob = affine(fx + "global_enc.0")
        w, b = affine(fx + "cand_enc.0")
        F = w.shape[0] - h
        self.cand_x, self.cand_g, self.cand_b = w[:F], w[F:], b
        self.cand2 = affine(fx + "cand_enc.2")
        w, b = affine(fx + "cand_mix.0")
        self.mix_e, self.mix_p, self.mix_b = w[:h], w[h:], b
        self.score_w, self.score_b = affine("action_net.score")
        self.skip_w, self.skip_b = affine("action_net.skip")
        self.value = [affine(f"mlp_extractor.value_net.{i}") if a == "Linear" else a
                      for i, a in enumerate(self.activations)]
        self.value_out = affine("value_net")
        self.version = version

    def __call__(self, obs: dict[str, np.ndarray], masks: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The masked, normalised log-probabilities ``[B, K + 1]`` and the values ``[B]``.

        Args:
            obs: A batch of observations (each key stacked on a first axis of size B).
            masks: Legal actions (bool ``[B, K + 1]``), or None.
        """
        h = self.hidden
        cands = np.asarray(obs["candidates"], dtype=np.float32)
        nodes = np.asarray(obs["nodes"], dtype=np.float32)
        decision = np.asarray(obs["decision"], dtype=np.float32)
        B, K, F = cands.shape
        N, G = nodes.shape[1:]
        # nodes: the shared per-node network, (masked) mean pooling; the decision node's row
        x = nodes.reshape(B * N, G)
        for w, b in self.node:
            x = _relu(x @ w + b)
        x = x.reshape(B, N, h)
        if self.node_mask:
            present = (nodes[:, :, NODE_SPEED_FEATURE] > 0).astype(np.float32)
            node_pool = np.matmul(present[:, None, :], x)[:, 0] \
                / np.maximum(present.sum(axis=1, keepdims=True), 1.0)
        else:
            node_pool = x.sum(axis=1) * np.float32(1.0 / N)
        dec_node = np.matmul(nodes[:, None, :, DECISION_NODE_FEATURE], nodes)[:, 0]
        parts = [_symlog(decision), obs["forecast"], dec_node, node_pool]
        if self.objective:
            parts.append(obs["objective"])
        g = _relu(np.concatenate(parts, axis=1) @ self.glob[0] + self.glob[1])
        # candidates: the shared per-candidate network given g, masked mean pooling, mixing
        valid = cands[:, :, VALID_FEATURE] > 0.5
        e = (_symlog(cands).reshape(B * K, F) @ self.cand_x).reshape(B, K, h)
        e = _relu(e + (g @ self.cand_g + self.cand_b)[:, None, :])
        e = _relu(e @ self.cand2[0] + self.cand2[1])
        w = valid.astype(np.float32)
        pool = np.matmul(w[:, None, :], e)[:, 0] / np.maximum(w.sum(axis=1, keepdims=True), 1.0)
        hk = _relu(e @ self.mix_e + (pool @ self.mix_p + self.mix_b)[:, None, :])
        # the head: a shared score per candidate, a skip score; illegal ones at ILLEGAL_LOGIT
        ctx = np.concatenate([g, pool], axis=1)
        logits = np.empty((B, K + 1), np.float32)
        logits[:, :K] = np.where(valid, (hk @ self.score_w)[:, :, 0] + self.score_b,
                                 ILLEGAL_LOGIT)
        skip = (ctx @ self.skip_w)[:, 0] + self.skip_b
        if self.work_conserving:
            busy = valid.any(axis=1) & (decision[:, _SCHEDULE] > 0.5)
            skip = np.where(busy, np.float32(ILLEGAL_LOGIT), skip)
        logits[:, K] = skip
        # the critic: the value MLP over the extractor's features
        v = np.concatenate([(hk * w[:, :, None]).reshape(B, K * h), ctx, w,
                            decision[:, _SCHEDULE:_SCHEDULE + 1]], axis=1)
        for layer in self.value:
            v = ACTIVATIONS[layer](v) if isinstance(layer, str) else v @ layer[0] + layer[1]
        values = (v @ self.value_out[0])[:, 0] + self.value_out[1]
        # sb3-contrib's MaskableCategorical normalises, masks at -1e8 and normalises again:
        # the same log-probabilities of the legal actions as masking, then normalising once
        if masks is not None:
            logits = np.where(np.asarray(masks, bool).reshape(B, K + 1), logits,
                              np.float32(ILLEGAL_LOGIT))
        return _log_normalise(logits), values

    def sample(self, log_p: np.ndarray) -> np.ndarray:
        """One action per row of the log-probabilities ``[B, A]`` (never one of probability 0),
        drawn by the inverse of the cumulative distribution."""
        cum = np.exp(log_p, dtype=np.float64).cumsum(axis=1)
        u = self.rng.random(len(cum)) * cum[:, -1] * (1.0 - 1e-12)    # below the total
        return (cum <= u[:, None]).sum(axis=1)


def collect_rollouts(algo, env, callback, rollout_buffer, n_rollout_steps: int) -> bool:
    """sb3-contrib's ``MaskablePPO.collect_rollouts`` with the policy's
    :class:`NumpyActorCritic`, in numpy from the observation to the rollout buffer.

    The same steps in the same order, and so the same buffer contents, as sb3-contrib's loop
    running the set policy's numpy forward pass (``SetPolicy.numpy_rollouts``), without its
    torch round trips per step (the observations made tensors and back, the actions, values
    and log-probabilities made tensors and copied back into the buffer) and the buffer's
    extra copies. Timeouts are bootstrapped with the torch value, as sb3-contrib does.

    Args:
        algo: The MaskablePPO model (its policy a ``SetPolicy``).
        env: The training ``VecEnv`` (it gives ``action_masks``).
        callback: The learn() callback (called at each step, as sb3-contrib does).
        rollout_buffer: A ``MaskableDictRolloutBuffer``, filled from its start.
        n_rollout_steps: Steps per env.

    Returns:
        False if a callback stopped training, else True.
    """
    import torch as th
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.utils import obs_as_tensor

    policy = algo.policy
    policy.set_training_mode(False)
    actor = policy.numpy_actor()                      # synced with the current weights
    rollout_buffer.reset()
    callback.on_rollout_start()
    rows = np.arange(env.num_envs)
    for _ in range(n_rollout_steps):
        obs = algo._last_obs
        masks = get_action_masks(env)
        log_p, values = actor(obs, masks)
        actions = actor.sample(log_p)
        new_obs, rewards, dones, infos = env.step(actions)
        algo.num_timesteps += env.num_envs
        callback.update_locals(locals())
        if not callback.on_step():
            return False
        algo._update_info_buffer(infos, dones)
        for i, done in enumerate(dones):           # a timeout: bootstrap with the value
            if done and infos[i].get("terminal_observation") is not None \
                    and infos[i].get("TimeLimit.truncated", False):
                terminal = policy.obs_to_tensor(infos[i]["terminal_observation"])[0]
                with th.no_grad():
                    rewards[i] += algo.gamma * policy.predict_values(terminal)[0]
        _add_step(rollout_buffer, obs, actions, rewards, algo._last_episode_starts, values,
                  log_p[rows, actions], masks)
        algo._last_obs = new_obs
        algo._last_episode_starts = dones
    with th.no_grad():
        values = policy.predict_values(obs_as_tensor(new_obs, algo.device))
    rollout_buffer.compute_returns_and_advantage(last_values=values, dones=dones)
    callback.on_rollout_end()
    return True


def _add_step(buffer, obs: dict, actions: np.ndarray, rewards: np.ndarray,
              episode_starts: np.ndarray, values: np.ndarray, log_probs: np.ndarray,
              masks: np.ndarray) -> None:
    """What ``MaskableDictRolloutBuffer.add`` stores for one step of every env (the same
    values, written once into the buffer's arrays)."""
    pos = buffer.pos
    for key, array in buffer.observations.items():
        array[pos] = obs[key]
    buffer.actions[pos] = actions.reshape(buffer.actions.shape[1:])
    buffer.rewards[pos] = rewards
    buffer.episode_starts[pos] = episode_starts
    buffer.values[pos] = values
    buffer.log_probs[pos] = log_probs
    buffer.action_masks[pos] = masks.reshape(buffer.action_masks.shape[1:])
    buffer.pos += 1
    if buffer.pos == buffer.buffer_size:
        buffer.full = True


__all__ = ["ACTIVATIONS", "NumpyActorCritic", "collect_rollouts"]
