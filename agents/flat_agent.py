"""SB3 models trained on one flat observation as policies of the harness: on a ``-flat``
variant (:mod:`mrsched_gym.env.flat`) or on a base id through Gymnasium's ``FlattenObservation``.

The checkpoint's observation space says which: the variant's ``Box`` holds the base keys in
the order ``decision, candidates, nodes, forecast`` (:data:`~mrsched_gym.env.flat.FLAT_KEYS`),
``FlattenObservation``'s in alphabetical order, so their bounds differ on every registered id
(tested). The harness gives every policy the base id's observation; this policy turns it into
what the model was trained on, and a variant's action back into the base action it plays, so a
model trained on ``mrsched/Hadoop-flat-v0`` plays ``mrsched/Hadoop-v0``'s worlds seed for seed.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from mrsched_gym.env.flat import FlatChoices, base_space_of
from mrsched_gym.errors import InputError

#: What a record's ``observation`` field says for each layout.
VARIANT, FLATTEN = "flat-variant", "FlattenObservation"


def same_box(a: gym.spaces.Space, b: gym.spaces.Space) -> bool:
    """Whether two spaces are ``Box`` es of the same shape and bounds."""
    return (isinstance(a, gym.spaces.Box) and isinstance(b, gym.spaces.Box)
            and a.shape == b.shape and np.array_equal(a.low, b.low)
            and np.array_equal(a.high, b.high))


def flat_logits(policy, flat: np.ndarray) -> np.ndarray:
    """An SB3 actor-critic policy's action logits for one flat observation."""
    import torch as th
    with th.no_grad():
        feats = policy.extract_features(th.as_tensor(flat).unsqueeze(0))
        if isinstance(feats, tuple):                             # separate actor / critic
            feats = feats[0]
        return policy.action_net(policy.mlp_extractor.forward_actor(feats))[0].numpy()


class FlatAgentPolicy:
    """An SB3 model (PPO, A2C, MaskablePPO) whose observation is one ``Box``, acting on the
    base env's observation and mask: deterministic (the most likely action).

    * Trained on a ``-flat`` variant: the observation is made with
      :class:`~mrsched_gym.env.flat.FlatChoices` and the chosen action played as the choice it
      names (every action legal).
    * Trained through ``FlattenObservation``: the observation is ``gymnasium.spaces.flatten``
      of the base one, and the action the model's most likely among those the mask offers
      (the harness holds every observation policy to the mask; a model trained without it
      would otherwise have its illegal choices played as skip).

    Args:
        model: The loaded model.
        name: The policy's label.
    """

    #: Its illegal actions are played as skip by the env and counted, as a model object's are
    #: in ``evaluate`` (:data:`mrsched_gym.policy.contract.ILLEGAL_AS_SKIP`).
    illegal_actions = "skip"

    def __init__(self, model, name: str) -> None:
        self.model = model
        self.name = name
        self.policy = model.policy
        self.policy.set_training_mode(False)
        self.space = self.policy.observation_space
        #: ``"flat-variant"`` or ``"FlattenObservation"`` once a world was seen (records).
        self.observation: str | None = None
        self._view: FlatChoices | None = None
        self._base: gym.spaces.Dict | None = None

    def layout(self, space: gym.spaces.Dict, where: str) -> str:
        """Which flat observation of the world ``where`` (its base space ``space``) the model
        was trained on; :class:`InputError` naming the shapes if neither."""
        if same_box(self.space, FlatChoices(space).observation_space):
            return VARIANT
        if same_box(self.space, gym.spaces.flatten_space(space)):
            return FLATTEN
        size = gym.spaces.flatdim(space)
        raise InputError(
            f"{self.name}: the model was trained on a Box observation of shape "
            f"{self.space.shape}; {where} gives {size} values flat, as its -flat variant or "
            f"through FlattenObservation, neither of which matches (shape or bounds): run it "
            f"on the world it was trained on")

    def check_fits(self, space: gym.spaces.Dict, where: str) -> None:
        """Raise :class:`InputError` if the model cannot act on the world ``where``."""
        self.layout(space, where)

    def reset(self, sim, seed: int | None = None) -> None:
        """Stateless between episodes."""

    def act(self, obs: dict, mask: np.ndarray) -> int:
        """The base action the model plays at this decision."""
        if self._base is None or any(obs[k].shape != self._base[k].shape for k in obs):
            self._base = base_space_of(obs)
            self.observation = self.layout(self._base, "this world")
            self._view = FlatChoices(self._base) if self.observation == VARIANT else None
        if self._view is not None:
            logits = flat_logits(self.policy, self._view.observe(obs, mask))
            return self._view.action(int(np.argmax(logits)))
        logits = flat_logits(self.policy, gym.spaces.flatten(self._base, obs))
        return int(np.argmax(np.where(mask, logits, -np.inf)))
