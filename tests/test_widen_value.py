"""``init_from`` a checkpoint with fewer candidate slots (K): the actor is K-free and the value
MLP's first layer is widened (agents/training/train_model.py, ``widen_value_input``), so the new
network
acts as the source and values every state with at most the source's K candidates as it did."""

import gymnasium as gym
import numpy as np
import pytest

th = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib import MaskablePPO  # noqa: E402

import mrsched_gym  # noqa: E402,F401
from mrsched_gym.agents import SetPolicy  # noqa: E402
from mrsched_gym.agents.training.train_model import init_weights  # noqa: E402


def _model(K: int, seed: int) -> MaskablePPO:
    env = gym.make("mrsched/Hadoop-v0", **{"decisions.max_candidates": K})
    return MaskablePPO(SetPolicy, env, seed=seed, n_steps=64, batch_size=64, device="cpu")


def _values_and_actions(model, obs_list):
    with th.no_grad():
        out = []
        for obs in obs_list:
            t, _ = model.policy.obs_to_tensor(obs)
            v = model.policy.predict_values(t).item()
            a, _ = model.predict(obs, deterministic=True,
                                 action_masks=np.ones(model.action_space.n, dtype=bool))
            out.append((v, int(a)))
        return out


def test_a_wider_network_started_from_a_narrower_one_values_and_acts_as_it(tmp_path):
    small = _model(8, seed=3)
    small.save(tmp_path / "k8.zip")
    big = _model(16, seed=4)
    before = big.policy.state_dict()["mlp_extractor.value_net.0.weight"].clone()
    init_weights(big, str(tmp_path / "k8.zip"))
    env8 = gym.make("mrsched/Hadoop-v0", **{"decisions.max_candidates": 8})
    obs8, _ = env8.reset(seed=0)
    states8, states16 = [], []
    for _ in range(40):                        # the K=8 observation padded to 16 slots
        pad = dict(obs8, candidates=np.concatenate(
            [obs8["candidates"], np.zeros_like(obs8["candidates"])]))
        states8.append(obs8)
        states16.append(pad)
        obs8, *_ = env8.step(int(np.flatnonzero(env8.unwrapped.action_masks())[0]))
    a = _values_and_actions(small, states8)
    b = _values_and_actions(big, states16)
    assert [x[1] for x in a] == [x[1] if x[1] < 16 else 8 for x in b]     # skip: K (8 / 16)
    np.testing.assert_allclose([x[0] for x in a], [x[0] for x in b], rtol=1e-5, atol=1e-5)
    after = big.policy.state_dict()["mlp_extractor.value_net.0.weight"]
    assert not th.equal(before, after)
    assert th.count_nonzero(after[:, 8 * 64:16 * 64]) == 0     # the new slots start at zero
