"""The rollouts' forward pass of a set-network MaskablePPO policy in numpy (training option).

During a rollout the policy only samples: for a batch of B observations (one per training env)
it needs each action's log-probability and each observation's value, no gradient. Torch spends
~0.6 ms on that for B = 4 (about a hundred small operations, each with its own overhead), a
third of a training step. :class:`NumpyActorCritic` computes the same in numpy, batched, from the
torch policy's current weights (read again whenever an optimiser step changed them): the set
network's actor (as :mod:`mrsched_gym.agents.numpy_policy`), the value MLP, and the masked
log-probabilities of sb3-contrib's ``MaskableCategorical`` (:meth:`NumpyActorCritic.sample`
draws the actions from its own generator, seeded from torch's when it is made).

:func:`collect_rollouts` runs sb3-contrib's rollout loop around it in numpy, from the
observation to the rollout buffer (``NumpyRolloutPPO``, the model of ``numerics: fast``).

The floats differ from torch's in the last bits (another BLAS, another order of the sums), so a
run with ``rollouts: numpy`` is deterministic but not bit-identical to a run with torch's
rollouts; the PPO updates are torch's either way.
"""

from __future__ import annotations

import numpy as np

from mrsched_gym.agents.numpy_policy import (
    BUSY_SKIP_LOGIT,
    DECISION_NODE_FEATURE,
    ILLEGAL_LOGIT,
    NODE_SPEED_FEATURE,
    VALID_FEATURE,
)
from mrsched_gym.agents.rule_prior import preference
from mrsched_gym.env.encoding import decision_kind_slot
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


class _Buffers:
    """Arrays reused from call to call for a batch of B observations with N nodes (G features)
    and K candidate rows. An affine layer's input ends with a column of ones, so that its bias
    is the last row of its matrix: one ``np.dot`` per layer."""

    def __init__(self, B: int, N: int, K: int, G: int, context: int, h: int,
                 prior: bool = False) -> None:
        f32 = np.float32
        self.nodes = np.ones((B * N, G + 1), f32)               # [nodes | 1]
        self.node_hidden = np.ones((B * N, h + 1), f32)         # [first node layer | 1]
        self.node_mean = np.full((B, 1, N), 1.0 / N, f32)       # pooling weights (no mask)
        self.context = np.ones((B, context + 1), f32)           # [context input | 1]
        self.g = np.ones((B, h + 1), f32)                       # [g | 1]
        self.cand_hidden = np.ones((B * K, h + 1), f32)         # [first candidate layer | 1]
        self.pool = np.ones((B, h + 1), f32)                    # [candidate pool | 1]
        extra = K if prior else 0                               # the rule's preference
        self.critic = np.ones((B, K * h + 2 * h + K + extra + 2), f32)  # [features | 1]
        self.critic_candidates = self.critic[:, :K * h].reshape(B, K, h)
        if not np.shares_memory(self.critic_candidates, self.critic):
            raise AssertionError("the critic's candidate block must be a view")


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
        self.prior = getattr(fx, "prior", None)                 # a residual policy's rule
        self.prior_weight = np.float32(policy.action_net.prior_weight or 0.0)
        self.hidden = fx.hidden
        self.activations = []
        for m in policy.mlp_extractor.value_net:
            name = type(m).__name__
            if name != "Linear" and name not in ACTIVATIONS:
                raise ValueError(f"no numpy counterpart of the value MLP's {name}")
            self.activations.append(name)
        if self.activations and self.activations[0] != "Linear":
            raise ValueError("the value MLP must start with a linear layer")
        import torch as th
        self.policy = policy
        self.rng = np.random.default_rng(int(th.randint(0, 2 ** 62, ())))   # seeded run: same
        self.params = list(policy.parameters())
        self.buffers: dict[tuple, _Buffers] = {}
        self.version = None
        self.sync()

    def weights_version(self) -> int:
        """A number that changes whenever a parameter is changed in place (optimiser steps,
        ``load_state_dict``): the sum of the parameters' version counters."""
        return sum(p._version for p in self.params)

    def sync(self) -> None:
        """Copy the torch policy's weights if they changed since the last copy (an affine
        layer whose input gets a trailing 1 is stored as ``[weight.T; bias]``)."""
        version = self.weights_version()
        if version == self.version:
            return
        sd = {k: v.detach().cpu().numpy().astype(np.float32)
              for k, v in self.policy.state_dict().items()}
        h = self.hidden

        def affine(key: str) -> tuple[np.ndarray, np.ndarray]:
            return np.ascontiguousarray(sd[f"{key}.weight"].T), sd[f"{key}.bias"]

        def folded(key: str) -> np.ndarray:
            return np.vstack(affine(key))

        fx = "features_extractor."
        self.node1, self.node2 = folded(fx + "node_enc.0"), folded(fx + "node_enc.2")
        self.glob = folded(fx + "global_enc.0")
        w, b = affine(fx + "cand_enc.0")
        F = w.shape[0] - h
        self.cand_x, self.cand_ctx = w[:F], np.vstack([w[F:], b])    # [g | 1] @ cand_ctx
        self.cand2 = folded(fx + "cand_enc.2")
        w, b = affine(fx + "cand_mix.0")
        self.mix_e, self.mix_ctx = w[:h], np.vstack([w[h:], b])      # [pool | 1] @ mix_ctx
        w, b = affine("action_net.score")
        self.score_w, self.score_b = w[:, 0], b[0]
        w, b = affine("action_net.skip")
        self.skip_w, self.skip_b = w[:, 0], b[0]
        chain = [affine(f"mlp_extractor.value_net.{i}") if a == "Linear" else a
                 for i, a in enumerate(self.activations)] + [affine("value_net")]
        self.value_in = np.vstack(chain[0])          # the critic features end with a 1
        self.value_rest = chain[1:]
        self.version = version

    def _buffers(self, B: int, N: int, K: int, G: int, context: int) -> _Buffers:
        key = (B, N, K, G, context)
        if key not in self.buffers:
            self.buffers[key] = _Buffers(B, N, K, G, context, self.hidden,
                                         self.prior is not None)
        return self.buffers[key]

    def __call__(self, obs: dict[str, np.ndarray], masks: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The masked, normalised log-probabilities ``[B, K + 1]`` and the values ``[B]``.

        Args:
            obs: A batch of observations (each key stacked on a first axis of size B).
            masks: Legal actions (bool ``[B, K + 1]``), or None.
        """
        h = self.hidden
        cands, nodes, decision = obs["candidates"], obs["nodes"], obs["decision"]
        B, K, F = cands.shape
        N, G = nodes.shape[1:]
        D, W = decision.shape[1], obs["forecast"].shape[1]
        buf = self._buffers(B, N, K, G, D + W + G + h + self.objective)
        # nodes: the shared per-node network, (masked) mean pooling
        buf.nodes[:, :G] = nodes.reshape(B * N, G)
        np.maximum(np.dot(buf.nodes, self.node1), 0.0, out=buf.node_hidden[:, :h])
        emb = _relu(np.dot(buf.node_hidden, self.node2)).reshape(B, N, h)
        # the context's input [symlog(decision), forecast, decision node, node pool, objective]
        ctx = buf.context
        ctx[:, :D] = _symlog(decision)
        ctx[:, D:D + W] = obs["forecast"]
        ctx[:, D + W:D + W + G] = np.matmul(nodes[:, None, :, DECISION_NODE_FEATURE], nodes)[:, 0]
        ctx[:, D + W + G:D + W + G + h] = np.matmul(self._node_weights(nodes, buf), emb)[:, 0]
        if self.objective:
            ctx[:, D + W + G + h:-1] = obs["objective"]
        g = buf.g
        np.maximum(np.dot(ctx, self.glob), 0.0, out=g[:, :h])
        # candidates: the shared per-candidate network given g, masked mean pooling, mixing
        valid = cands[:, :, VALID_FEATURE] > 0.5
        e = np.dot(_symlog(cands).reshape(B * K, F), self.cand_x).reshape(B, K, h)
        e += np.dot(g, self.cand_ctx)[:, None, :]
        np.maximum(e.reshape(B * K, h), 0.0, out=buf.cand_hidden[:, :h])
        e = _relu(np.dot(buf.cand_hidden, self.cand2))                  # [B * K, h]
        w = valid.astype(np.float32)
        pool = buf.pool
        np.divide(np.matmul(w[:, None, :], e.reshape(B, K, h))[:, 0],
                  np.maximum(w.sum(axis=1, keepdims=True), 1.0), out=pool[:, :h])
        hk = np.dot(e, self.mix_e).reshape(B, K, h)
        hk += np.dot(pool, self.mix_ctx)[:, None, :]
        _relu(hk)
        # the critic's input: the extractor's features [hk * valid, g, pool, valid, schedule, 1]
        crit = buf.critic
        np.multiply(hk, w[:, :, None], out=buf.critic_candidates)
        kh = K * h
        crit[:, kh:kh + h] = g[:, :h]
        crit[:, kh + h:kh + 2 * h] = pool[:, :h]
        crit[:, kh + 2 * h:kh + 2 * h + K] = w
        crit[:, -2] = decision[:, _SCHEDULE]
        # the head: a shared score per candidate, a skip score; illegal ones at ILLEGAL_LOGIT
        logits = np.empty((B, K + 1), np.float32)
        scores = np.dot(hk.reshape(B * K, h), self.score_w).reshape(B, K) + self.score_b
        if self.prior is not None:          # a residual policy: the rule's preference added
            pref = preference(self.prior, cands, decision[:, _SCHEDULE])
            crit[:, kh + 2 * h + K:kh + 2 * h + 2 * K] = pref
            scores += self.prior_weight * pref
        logits[:, :K] = np.where(valid, scores, ILLEGAL_LOGIT)
        logits[:, K] = np.dot(crit[:, kh:kh + 2 * h], self.skip_w) + self.skip_b
        if self.work_conserving:
            logits[valid.any(axis=1) & (decision[:, _SCHEDULE] > 0.5), K] = BUSY_SKIP_LOGIT
        # the critic: the value MLP over the features
        v = np.dot(crit, self.value_in)
        for layer in self.value_rest:
            v = ACTIVATIONS[layer](v) if isinstance(layer, str) else np.dot(v, layer[0]) + layer[1]
        # sb3-contrib's MaskableCategorical normalises, masks at -1e8 and normalises again:
        # the same log-probabilities of the legal actions as masking, then normalising once
        if masks is not None:
            logits = np.where(np.asarray(masks, bool).reshape(B, K + 1), logits,
                              np.float32(ILLEGAL_LOGIT))
        return _log_normalise(logits), v[:, 0]

    def _node_weights(self, nodes: np.ndarray, buf: _Buffers) -> np.ndarray:
        """``[B, 1, N]``: each node's weight in its observation's pool (the mean, or the mean
        over the present nodes with ``node_mask``)."""
        if not self.node_mask:
            return buf.node_mean
        present = (nodes[:, None, :, NODE_SPEED_FEATURE] > 0).astype(np.float32)
        return present / np.maximum(present.sum(axis=2, keepdims=True), 1.0)

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
    It mirrors sb3-contrib 2.x's loop, down to the attributes that loop keeps on the model
    (``_last_obs``, ``_last_episode_starts``, ``_update_info_buffer``); the test that compares
    the two buffers bit for bit (``tests/test_trainspeed.py``, ended and truncated episodes)
    runs against the installed sb3-contrib, so a change upstream fails there first.

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
