"""The shipped agents' numpy actor: its shortcuts take the actions of the full computation.

``NumpySetPolicy.act`` scores only the legal candidates when the mask is the env's own, takes a
lone legal action without a forward pass and falls back to the whole masked logit vector for
any other mask; these tests hold every path to the torch policy (or, without torch, to the
argmax of the numpy logits), on scenarios with admission and preemption decisions too.
"""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym  # noqa: F401
from mrsched_gym.agents.numpy_policy import NumpySetPolicy
from mrsched_gym.agents.pretrained import pretrained_agents

#: Short episodes: 20 minutes of arrivals.
SHORT = {"workload.duration_s": 1200}


def _decisions(env_id: str, pol, seed: int = 0, kwargs: dict | None = None):
    """Every decision of one episode (``pol`` acting): ``(observation, env mask)``."""
    env = gym.make(env_id, **(kwargs if kwargs is not None else SHORT))
    obs, _ = env.reset(seed=seed)
    pol.reset(env.unwrapped.sim, seed=seed)          # as the harness does (an objective agent)
    while True:
        mask = env.unwrapped.action_masks()
        yield obs, mask
        obs, _, term, trunc, _ = env.step(pol.act(obs, mask))
        if term or trunc:
            return


def _masked_argmax(pol: NumpySetPolicy, obs: dict, mask: np.ndarray) -> int:
    """The action of the plain computation: the argmax of the masked logit vector."""
    from mrsched_gym.agents.policy import work_conserving_mask
    from mrsched_gym.env.encoding import observed_kind
    from mrsched_gym.sim.decision import SCHEDULE
    logits = pol.logits(obs)
    if pol.masked:
        if pol.work_conserving:
            mask = work_conserving_mask(mask, observed_kind(obs["decision"]) == SCHEDULE)
        logits = np.where(mask, logits, -np.inf)
    return int(np.argmax(logits))


@pytest.mark.parametrize("agent", ["hadoop-v0", "general"])
@pytest.mark.parametrize("env_id", ["mrsched/Admission-v1", "mrsched/Preemption-v0",
                                    "mrsched/Heterogeneous-v0"])
def test_every_shortcut_takes_the_action_of_the_full_computation(agent, env_id):
    """The env's mask (only the legal candidates scored; a lone legal action taken directly),
    random masks, all-illegal masks and a candidate mask that is not the env's (the general
    path): the argmax of the whole masked logit vector every time."""
    pol = NumpySetPolicy.load(pretrained_agents()[agent]["numpy_path"])
    rng = np.random.default_rng(0)
    n = lone = 0
    for obs, mask in _decisions(env_id, pol):
        assert pol.act(obs, mask) == _masked_argmax(pol, obs, mask)
        lone += int(mask.sum() == 1 or (mask[:-1].sum() == 1))
        for other in (rng.random(len(mask)) < 0.5, np.zeros_like(mask), ~mask):
            assert pol.act(obs, other) == _masked_argmax(pol, obs, other), n
        n += 1
    assert n > 100 and lone > 0


def test_an_unmasked_actor_takes_the_argmax_of_its_logits():
    """A plain-PPO export (no mask; illegal candidates at -1e8 in the head) ignores the mask."""
    info = pretrained_agents()["hadoop-v0"]
    with np.load(info["numpy_path"]) as z:
        weights = {k: z[k] for k in z.files if k != "__meta__"}
    pol = NumpySetPolicy(weights, {"hidden": 64, "work_conserving": True, "masked": False,
                                   "forecast": 8}, "plain")
    n = 0
    for obs, mask in _decisions("mrsched/Admission-v1", pol):
        assert pol.act(obs, np.zeros_like(mask)) == int(np.argmax(pol.logits(obs)))
        n += 1
    assert n > 100


def test_a_pickled_actor_rebuilds_its_buffers():
    """Pickling drops the buffers (views would become copies): the copy acts the same, and the
    two never share a buffer."""
    pol = NumpySetPolicy.load(pretrained_agents()["hadoop-v0"]["numpy_path"])
    decisions = list(_decisions("mrsched/Hadoop-v0", pol))
    copy = pickle.loads(pickle.dumps(pol))
    for obs, mask in decisions:
        assert copy.act(obs, mask) == pol.act(obs, mask)
        np.testing.assert_array_equal(copy.logits(obs), pol.logits(obs))


def test_the_numpy_actor_takes_the_torch_actions_on_admission_decisions():
    """Against torch itself, on a scenario with accept/reject decisions (skip = reject, which
    work conservation never masks)."""
    pytest.importorskip("torch")
    from mrsched_gym.agents.policy import load_agent
    info = pretrained_agents()["hadoop-v0"]
    torch_pol, pol = load_agent(info["path"]), NumpySetPolicy.load(info["numpy_path"])
    n = 0
    for obs, mask in _decisions("mrsched/Admission-v1", pol):
        assert pol.act(obs, mask) == torch_pol.act(obs, mask), n
        n += 1
    assert n > 100
