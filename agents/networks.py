"""Policy networks for the env's set-structured observation (compared in docs/agents.md).

The observation is a *set* of candidate jobs (``candidates`` [K, F], row ``i`` = action ``i``,
zero rows past the candidates) and a set of nodes (``nodes`` [N, G]), plus global vectors
(``decision``, ``forecast``). Two feature extractors share the same input scaling so that the
comparison isolates the architecture:

* :class:`FlatExtractor` — every key flattened and concatenated (what SB3's ``MultiInputPolicy``
  does), followed by the usual MLP heads. The order of the candidates matters to it.
* :class:`SetExtractor` — Deep Sets over nodes (shared per-node network, mean pooling) and over
  candidates (shared per-candidate network conditioned on the global context, masked mean pooling,
  then a second shared layer that sees the pool: one round of message passing). It outputs the
  per-candidate embeddings, the global context and the legality flags.

:class:`CandidateScorer` is the matching action head: a *shared* linear score per candidate
embedding (action ``i``) plus a score of the global context for skip (action ``K``), so the policy
is permutation-equivariant — permuting the candidates permutes the action probabilities —
and its size does not grow with K. Illegal candidates (valid flag 0, the env's mask) get a logit
of -1e8, so plain PPO never samples them either; MaskablePPO masks the same actions again.
With ``work_conserving=True`` skip is masked too at *schedule* decisions that have a candidate
(never at admission or preemption decisions, where skip means reject / wait): the policy never
leaves a slot idle while a job could use it, like every baseline except delay scheduling. Without
it, a deterministic (argmax) policy readily picks skip, whose single logit competes with the
candidates' shared probability mass, and idles the cluster.
:class:`SetPolicy` (MaskablePPO) and :class:`SetPolicyPPO` (plain PPO) put the two together.

Inputs are scaled with ``symlog(x) = sign(x) log(1 + |x|)`` (features in hours reach +-24, wait
times 100): stateless, so checkpoints need no running normalisation statistics.

The layers themselves (encoder, :class:`CandidateScorer`) live in plain torch in
:mod:`mrsched_gym.agents.set_layers`, shared with the RLlib module
(:mod:`mrsched_gym.agents.rllib_module`); this module adds the SB3 wrappers.
"""

from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np
import torch as th
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from mrsched_gym.agents.set_layers import (
    ILLEGAL_LOGIT,
    CandidateScorer,
    SetEncoding,
    symlog,
)
from mrsched_gym.encoding import decision_kind_slot
from mrsched_gym.sim.decision import SCHEDULE

_SCHEDULE = decision_kind_slot(SCHEDULE)       # the schedule entry of obs["decision"]


class FlatExtractor(BaseFeaturesExtractor):
    """All observation keys, symlog-scaled, flattened and concatenated (sorted key order).

    Args:
        observation_space: The env's ``Dict`` observation space.
    """

    def __init__(self, observation_space: gym.spaces.Dict) -> None:
        self.keys = sorted(observation_space.spaces)
        dim = int(sum(np.prod(observation_space[k].shape) for k in self.keys))
        super().__init__(observation_space, features_dim=dim)

    def forward(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        """The features ``[B, features_dim]`` of a batch of observations."""
        return th.cat([symlog(obs[k].flatten(1)) for k in self.keys], dim=1)


class SetExtractor(SetEncoding, BaseFeaturesExtractor):
    """Permutation-aware encoder of candidates and nodes (see the module docstring; the layers
    are :class:`~mrsched_gym.agents.set_layers.SetEncoding`'s, shared with the RLlib module).

    Output layout (``features_dim = K*hidden + 2*hidden + K + 1``): the K candidate embeddings,
    flattened; the context (global embedding, candidate pool); the K legality flags; 1 if this
    is a schedule decision.

    Args:
        observation_space: The env's ``Dict`` observation space.
        hidden: Width of the embeddings.
        node_mask: Pool only the present nodes (a row with speed feature 2 > 0; zero rows are
            the padding of :class:`~mrsched_gym.agents.worlds.WorldPool`). Equal to the plain
            mean on an unpadded observation.
    """

    def __init__(self, observation_space: gym.spaces.Dict, hidden: int = 64,
                 node_mask: bool = False) -> None:
        K, F = observation_space["candidates"].shape
        N, G = observation_space["nodes"].shape
        D = observation_space["decision"].shape[0]
        W = observation_space["forecast"].shape[0]
        super().__init__(observation_space, features_dim=K * hidden + 2 * hidden + K + 1)
        self.K, self.hidden, self.node_mask = K, hidden, node_mask
        self._build_set_layers(F, G, D, W, hidden)

    def forward(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        """The features ``[B, features_dim]`` of a batch of observations (layout above)."""
        h, g, pool, valid = self.encode_sets(obs)
        return th.cat([(h * valid.unsqueeze(2)).flatten(1), g, pool, valid,
                       obs["decision"][:, _SCHEDULE:_SCHEDULE + 1]], dim=1)


class _SetHeadMixin:
    """Replaces the default linear action head by :class:`CandidateScorer` (SB3 ``_build``)."""

    def __init__(self, *args, work_conserving: bool = False, **kwargs) -> None:
        self.work_conserving = work_conserving
        kwargs.setdefault("features_extractor_class", SetExtractor)
        kwargs.setdefault("net_arch", dict(pi=[], vf=[64, 64]))
        super().__init__(*args, **kwargs)

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        fx = self.features_extractor
        if not isinstance(fx, SetExtractor):
            raise TypeError("the set policy needs features_extractor_class=SetExtractor")
        if self.mlp_extractor.latent_dim_pi != fx.features_dim:
            raise ValueError("the set policy needs net_arch with pi=[] (the head scores the "
                             "candidate embeddings directly)")
        self.action_net = CandidateScorer(fx.K, fx.hidden, self.work_conserving)
        if self.ortho_init:
            self.action_net.apply(partial(self.init_weights, gain=0.01))
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),
                                              **self.optimizer_kwargs)


    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["work_conserving"] = self.work_conserving
        return data


def masked_log_probs(logits: th.Tensor, masks: th.Tensor | np.ndarray | None) -> th.Tensor:
    """The normalised log-probabilities ``[B, A]`` of sb3-contrib's ``MaskableCategorical``.

    The same tensor operations in the same order (normalise the logits, set the masked ones to
    -1e8, normalise again), so the same floats, without building three ``Categorical``
    objects (and validating their arguments) per call: that costs more than the network.

    Args:
        logits: The action logits ``[B, A]``.
        masks: Legal actions (bool ``[B, A]``, or anything of that size), or None.
    """
    logits = logits - logits.logsumexp(dim=-1, keepdim=True)
    if masks is not None:
        masks = th.as_tensor(masks, dtype=th.bool, device=logits.device).reshape(logits.shape)
        logits = th.where(masks, logits, th.tensor(-1e8, dtype=logits.dtype,
                                                    device=logits.device))
    return logits - logits.logsumexp(dim=-1, keepdim=True)


class SetPolicy(_SetHeadMixin, MaskableActorCriticPolicy):
    """MaskablePPO policy: :class:`SetExtractor` + :class:`CandidateScorer`.

    :meth:`forward` (rollouts) and :meth:`evaluate_actions` (PPO updates) compute what
    sb3-contrib's do, with the same tensor operations, the same random draw and so the same
    floats (tested), but without the distribution objects (:func:`masked_log_probs`).
    """

    def forward(self, obs: dict[str, th.Tensor], deterministic: bool = False,
                action_masks: np.ndarray | None = None
                ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Sampled actions, values and the actions' log-probabilities (as sb3-contrib's)."""
        if deterministic or not self.share_features_extractor:
            return super().forward(obs, deterministic, action_masks)
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        values = self.value_net(latent_vf)
        log_p = masked_log_probs(self.action_net(latent_pi).view(-1, self.action_dist.action_dim),
                                 action_masks)
        probs = th.nn.functional.softmax(log_p, dim=-1)   # Categorical.sample's draw
        actions = th.multinomial(probs, 1, True).T.reshape(log_p.shape[:-1])
        log_prob = log_p.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
        return actions.reshape((-1, *self.action_space.shape)), values, log_prob

    def evaluate_actions(self, obs: dict[str, th.Tensor], actions: th.Tensor,
                         action_masks: th.Tensor | None = None
                         ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Values, log-probabilities of ``actions`` and entropies (as sb3-contrib's)."""
        if action_masks is None or not self.share_features_extractor:
            return super().evaluate_actions(obs, actions, action_masks)
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        log_p = masked_log_probs(self.action_net(latent_pi).view(-1, self.action_dist.action_dim),
                                 action_masks)
        log_prob = log_p.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
        values = self.value_net(latent_vf)
        masks = th.as_tensor(action_masks, dtype=th.bool, device=log_p.device).reshape(
            log_p.shape)
        p_log_p = log_p * th.nn.functional.softmax(log_p, dim=-1)   # masked actions count 0
        entropy = -th.where(masks, p_log_p, th.tensor(0.0, device=log_p.device)).sum(-1)
        return values, log_prob, entropy


class SetPolicyPPO(_SetHeadMixin, ActorCriticPolicy):
    """Plain-PPO policy: the same network; illegal actions are masked inside the head."""


__all__ = ["FlatExtractor", "SetExtractor", "CandidateScorer", "SetPolicy", "SetPolicyPPO",
           "ILLEGAL_LOGIT", "masked_log_probs", "symlog"]
