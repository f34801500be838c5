"""Policy networks for the env's set-structured observation (compared in docs/notes/agents.md).

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
(:mod:`mrsched_gym.agents.rllib_module`); this module adds the SB3 wrappers. The training
envs' vectorisation without deep copies is :mod:`mrsched_gym.agents.training.vec_envs`.
"""

from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np
import torch as th
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.preprocessing import preprocess_obs
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch.nn import functional

from mrsched_gym.agents.rule_prior import check_prior, check_prior_weight, preference
from mrsched_gym.agents.set_layers import (
    ILLEGAL_LOGIT,
    CandidateScorer,
    SetEncoding,
    SetFeatures,
    symlog,
)
from mrsched_gym.env.encoding import decision_kind_slot
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

    The context reads ``objective`` too when the space has it (an env made with
    ``observe_objective=True``).

    Output layout (``features_dim = K*hidden + 2*hidden + K + 1``): the K candidate embeddings,
    flattened; the context (global embedding, candidate pool); the K legality flags; with a
    ``prior``, the K values of the rule's preference
    (:func:`~mrsched_gym.agents.rule_prior.preference`; ``features_dim`` then K more); 1 if this
    is a schedule decision.

    Args:
        observation_space: The env's ``Dict`` observation space.
        hidden: Width of the embeddings.
        node_mask: Pool only the present nodes (a row with speed feature 2 > 0; zero rows are
            the padding of :class:`~mrsched_gym.agents.training.worlds.WorldPool`). Equal to the
            plain mean on an unpadded observation.
        prior: The rule whose preference the features carry (one of
            :data:`~mrsched_gym.agents.rule_prior.PRIOR_RULES`), or None.
    """

    def __init__(self, observation_space: gym.spaces.Dict, hidden: int = 64,
                 node_mask: bool = False, prior: str | None = None) -> None:
        K, F = observation_space["candidates"].shape
        N, G = observation_space["nodes"].shape
        D = observation_space["decision"].shape[0]
        W = observation_space["forecast"].shape[0]
        n_obj = observation_space["objective"].shape[0] \
            if "objective" in observation_space.spaces else 0
        self.prior = check_prior(prior)
        extra = K if prior is not None else 0
        super().__init__(observation_space,
                         features_dim=K * hidden + 2 * hidden + K + extra + 1)
        self.K, self.hidden, self.node_mask = K, hidden, node_mask
        self._build_set_layers(F, G, D, W, hidden, n_obj)

    def forward(self, obs: dict[str, th.Tensor]) -> th.Tensor:
        """The features ``[B, features_dim]`` of a batch of observations (layout above)."""
        return self.flat_features(obs, self.encode_sets(obs), self.preference(obs))

    def preference(self, obs: dict[str, th.Tensor]) -> th.Tensor | None:
        """The prior rule's preference ``[B, K]`` of a batch of observations (None without
        a prior)."""
        if self.prior is None:
            return None
        pref = preference(self.prior, obs["candidates"].detach().cpu().numpy(),
                          obs["decision"][:, _SCHEDULE].detach().cpu().numpy())
        return th.from_numpy(pref).to(obs["candidates"].device)

    @staticmethod
    def flat_features(obs: dict[str, th.Tensor], sets: SetFeatures,
                      prior: th.Tensor | None = None) -> th.Tensor:
        """The layout above, of the observations' :meth:`encode_sets` result ``sets`` (and
        the rule's preference, with a prior)."""
        return SetExtractor.flat_features_of(
            sets, obs["decision"][:, _SCHEDULE:_SCHEDULE + 1], prior)

    @staticmethod
    def flat_features_of(sets: SetFeatures, schedule: th.Tensor,
                         prior: th.Tensor | None = None) -> th.Tensor:
        """The layout above, of set features, the schedule flags ``[B, 1]`` and the rule's
        preference ``[B, K]`` (None without a prior)."""
        h, g, pool, valid = sets
        extra = [] if prior is None else [prior]
        return th.cat([(h * valid.unsqueeze(2)).flatten(1), g, pool, valid, *extra, schedule],
                      dim=1)


class _SetHeadMixin:
    """Replaces the default linear action head by :class:`CandidateScorer` (SB3 ``_build``).

    ``prior`` (a rule of :data:`~mrsched_gym.agents.rule_prior.PRIOR_RULES`) makes it a
    residual policy: the candidates' logits are ``prior_weight`` times the rule's preference
    plus the learned scores, whose layer starts at zero, so that the untrained policy's
    deterministic action is the rule's (:mod:`mrsched_gym.agents.rule_prior`).
    """

    def __init__(self, *args, work_conserving: bool = False, prior: str | None = None,
                 prior_weight: float = 2.0, **kwargs) -> None:
        self.work_conserving = work_conserving
        self.prior = check_prior(prior)
        self.prior_weight = check_prior_weight(prior_weight)
        if prior is not None:
            kwargs["features_extractor_kwargs"] = dict(
                kwargs.get("features_extractor_kwargs") or {}, prior=prior)
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
        self.action_net = CandidateScorer(
            fx.K, fx.hidden, self.work_conserving,
            None if self.prior is None else self.prior_weight)
        if self.ortho_init:
            self.action_net.apply(partial(self.init_weights, gain=0.01))
        if self.prior is not None:       # the correction starts at zero: the rule's actions
            th.nn.init.zeros_(self.action_net.score.weight)
            th.nn.init.zeros_(self.action_net.score.bias)
        kwargs = dict(self.optimizer_kwargs)
        if self.optimizer_class is th.optim.Adam:        # the same floats, in fewer calls
            kwargs.setdefault("foreach", True)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **kwargs)


    def _get_constructor_parameters(self) -> dict:
        data = super()._get_constructor_parameters()
        data["work_conserving"] = self.work_conserving
        if self.prior is not None:
            data.update(prior=self.prior, prior_weight=self.prior_weight)
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
    With ``numpy_rollouts`` set, :meth:`forward` without gradient (a rollout) runs in numpy
    instead (:class:`~mrsched_gym.agents.numpy_rollout.NumpyActorCritic`): faster, the same
    up to the last bits of the floats.
    """

    numpy_rollouts: bool = False
    _numpy_actor = None

    def forward(self, obs: dict[str, th.Tensor], deterministic: bool = False,
                action_masks: np.ndarray | None = None
                ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Sampled actions, values and the actions' log-probabilities (as sb3-contrib's)."""
        if deterministic or not self.share_features_extractor:
            return super().forward(obs, deterministic, action_masks)
        if self.numpy_rollouts and not th.is_grad_enabled():
            return self._numpy_forward(obs, action_masks)
        latent_pi, latent_vf = self.mlp_extractor(self.extract_features(obs))
        values = self.value_net(latent_vf)
        log_p = masked_log_probs(self.action_net(latent_pi).view(-1, self.action_dist.action_dim),
                                 action_masks)
        probs = th.nn.functional.softmax(log_p, dim=-1)   # Categorical.sample's draw
        actions = th.multinomial(probs, 1, True).T.reshape(log_p.shape[:-1])
        log_prob = log_p.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
        return actions.reshape((-1, *self.action_space.shape)), values, log_prob

    def numpy_actor(self):
        """The rollouts' :class:`~mrsched_gym.agents.numpy_rollout.NumpyActorCritic` (made
        on first use), with the weights of the last update."""
        from mrsched_gym.agents.numpy_rollout import NumpyActorCritic
        if self._numpy_actor is None:
            self._numpy_actor = NumpyActorCritic(self)
        self._numpy_actor.sync()
        return self._numpy_actor

    def _numpy_forward(self, obs: dict[str, th.Tensor], action_masks: np.ndarray | None
                       ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        actor = self.numpy_actor()
        log_p, values = actor({k: v.cpu().numpy() for k, v in obs.items()}, action_masks)
        actions = actor.sample(log_p)
        log_prob = th.from_numpy(log_p[np.arange(len(log_p)), actions])
        return (th.from_numpy(actions).reshape((-1, *self.action_space.shape)),
                th.from_numpy(values).unsqueeze(1), log_prob)

    def evaluate_actions(self, obs: dict[str, th.Tensor], actions: th.Tensor,
                         action_masks: th.Tensor | None = None
                         ) -> tuple[th.Tensor, th.Tensor, th.Tensor]:
        """Values, log-probabilities of ``actions`` and entropies (as sb3-contrib's)."""
        if action_masks is None or not self.share_features_extractor:
            return super().evaluate_actions(obs, actions, action_masks)
        log_p, latent_vf = self._log_probs_and_latent_vf(obs, action_masks, critic=True)
        log_prob = log_p.gather(-1, actions.long().unsqueeze(-1)).squeeze(-1)
        values = self.value_net(latent_vf)
        masks = th.as_tensor(action_masks, dtype=th.bool, device=log_p.device).reshape(
            log_p.shape)
        p_log_p = log_p * th.nn.functional.softmax(log_p, dim=-1)   # masked actions count 0
        entropy = -th.where(masks, p_log_p, th.tensor(0.0, device=log_p.device)).sum(-1)
        return values, log_prob, entropy

    def action_log_probs(self, obs: dict[str, th.Tensor], action_masks: th.Tensor
                         ) -> th.Tensor:
        """The masked, normalised log-probabilities ``[B, A]`` of every action, with gradients
        (as :meth:`evaluate_actions` computes them; no critic pass). For losses over the whole
        distribution (imitation's soft targets)."""
        if not self.share_features_extractor:
            dist = self.get_distribution(obs, action_masks)
            return dist.distribution.logits
        return self._log_probs_and_latent_vf(obs, action_masks, critic=False)[0]

    def _log_probs_and_latent_vf(self, obs: dict[str, th.Tensor], action_masks: th.Tensor,
                                 critic: bool) -> tuple[th.Tensor, th.Tensor | None]:
        fx = self.features_extractor
        latent_vf = None
        if fx.fast_numerics:        # the head reads the set features, not slices of the flat
            obs = preprocess_obs(obs, self.observation_space,
                                 normalize_images=self.normalize_images)
            sets = fx.encode_sets(obs)
            prior = fx.preference(obs)
            h, g, pool, valid = sets
            logits = self.action_net.logits(
                h, th.cat([g, pool], dim=1), valid > 0.5,
                obs["decision"][:, _SCHEDULE:_SCHEDULE + 1] > 0.5, prior)
            if critic:
                latent_vf = critic_latent(self.mlp_extractor.value_net, sets,
                                          obs["decision"][:, _SCHEDULE:_SCHEDULE + 1], prior)
        else:
            features = self.extract_features(obs)
            if critic:
                latent_pi, latent_vf = self.mlp_extractor(features)
            else:
                latent_pi = self.mlp_extractor.forward_actor(features)
            logits = self.action_net(latent_pi)
        return masked_log_probs(logits.view(-1, self.action_dist.action_dim), action_masks), \
            latent_vf


def critic_latent(value_net: th.nn.Sequential, sets: SetFeatures, schedule: th.Tensor,
                  prior: th.Tensor | None = None) -> th.Tensor:
    """The value MLP (SB3's ``mlp_extractor.value_net``) over the extractor's flat features,
    from the set features of ``fast_numerics`` (whose rows without a candidate are already 0).

    The first layer is split by input block: the K candidate embeddings ``[B, K*h]`` times
    their columns of the weight, plus the rest (context, pool, flags, the rule's preference
    ``prior`` if any, ``schedule``) times theirs, so the ``[B, features_dim]`` input is never
    concatenated nor masked again. The same function as
    ``value_net(SetExtractor.flat_features(...))``, with other roundings.
    """
    layers = list(value_net)
    if not layers or not isinstance(layers[0], th.nn.Linear):
        return value_net(SetExtractor.flat_features_of(sets, schedule, prior))
    h, g, pool, valid = sets
    first, n = layers[0], h.shape[1] * h.shape[2]
    extra = [] if prior is None else [prior]
    x = functional.linear(h.flatten(1), first.weight[:, :n]) + functional.linear(
        th.cat([g, pool, valid, *extra, schedule], dim=1), first.weight[:, n:], first.bias)
    for layer in layers[1:]:
        x = layer(x)
    return x


class SetPolicyPPO(_SetHeadMixin, ActorCriticPolicy):
    """Plain-PPO policy: the same network; illegal actions are masked inside the head."""


class NumpyRolloutPPO(MaskablePPO):
    """MaskablePPO whose rollouts, when its policy is a :class:`SetPolicy` with
    ``numpy_rollouts`` (``numerics: fast``), run in numpy from the observation to the rollout
    buffer (:func:`~mrsched_gym.agents.numpy_rollout.collect_rollouts`: the same buffer
    contents as sb3-contrib's loop with that policy, fewer conversions). Otherwise, and for
    everything else, it is MaskablePPO; its checkpoints load with ``MaskablePPO.load``."""

    def collect_rollouts(self, env, callback, rollout_buffer, n_rollout_steps: int,
                         use_masking: bool = True) -> bool:
        """Fill ``rollout_buffer`` with ``n_rollout_steps`` steps of every env."""
        if not (use_masking and getattr(self.policy, "numpy_rollouts", False)):
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps,
                                            use_masking)
        from mrsched_gym.agents.numpy_rollout import collect_rollouts
        return collect_rollouts(self, env, callback, rollout_buffer, n_rollout_steps)


__all__ = ["FlatExtractor", "SetExtractor", "CandidateScorer", "SetPolicy", "SetPolicyPPO",
           "ILLEGAL_LOGIT", "NumpyRolloutPPO", "critic_latent", "masked_log_probs", "symlog"]
