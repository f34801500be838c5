"""The pool of randomised worlds the generalist trains on
(``mrsched_gym.agents.training.worlds``)."""

import numpy as np
import pytest

from mrsched_gym.agents.training.worlds import WorldPool, WorldsConfig, pad_mask, pad_observation
from mrsched_gym.registration import ENV_IDS

#: The pool's worlds: not the week (too long) nor Stragglers-v0 (its decision array is longer).
IDS = [i for i in ENV_IDS if i not in ("mrsched/ThesisScale-v0", "mrsched/Stragglers-v0")]


def pool(**kw) -> WorldPool:
    cfg = dict(ids=IDS, vary={"workload.load": [0.8, 1.2], "cluster.size": [0.75, 1.25],
                              "interference.mean": [0.5, 1.5]}, max_nodes=25)
    cfg.update(kw)
    return WorldPool(WorldsConfig(**cfg))


def test_pad_mask_maps_skip_and_never_allows_padding():
    m = pad_mask(np.array([True, True, False, True]), 8)       # env K=3: 2 candidates + skip
    assert m.tolist() == [True, True, False, False, False, False, False, False, True]


def test_pad_observation_shapes_and_values():
    obs = {"decision": np.ones(10, np.float32), "candidates": np.ones((3, 22), np.float32),
           "nodes": np.ones((4, 10), np.float32), "forecast": np.array([0.5, 0.7], np.float32)}
    p = pad_observation(obs, 8, 6, 5)
    assert p["candidates"].shape == (8, 22) and not p["candidates"][3:].any()
    assert p["nodes"].shape == (6, 10) and not p["nodes"][4:].any()
    assert p["forecast"].tolist() == pytest.approx([0.5, 0.7, 0.7, 0.7, 0.7])


def test_pool_steps_pad_and_mask_correctly():
    env = pool()
    obs, info = env.reset(seed=3)
    for _ in range(60):
        assert env.observation_space.contains(obs)
        m = env.action_masks()
        inner = env.env.action_masks()
        K = env.env.K
        assert m[env.K] == inner[K]                                 # skip <-> skip
        assert not m[K:env.K].any()                                 # padded rows never legal
        assert not obs["candidates"][~m[:-1], 0].any()              # illegal rows are invalid
        assert not obs["nodes"][env.env.sim.n_nodes:].any()         # absent nodes are zero
        obs, r, term, trunc, info = env.step(int(np.flatnonzero(m)[-1]))   # skip when legal
        assert not info["invalid_action"]
        if term or trunc:
            obs, info = env.reset()


def test_pool_skip_is_the_envs_skip():
    env = pool(ids=["mrsched/Preemption-v0"])
    env.reset(seed=0)
    for _ in range(200):                       # skip everywhere: legal, never invalid
        _, _, term, trunc, info = env.step(env.K)
        assert not info["invalid_action"]
        if term or trunc:
            break


def test_pool_is_deterministic():
    def run(seed):
        env = pool()
        out = []
        for _ in range(4):
            obs, info = env.reset(seed=seed) if not out else env.reset()
            out.append((info["world"], sorted(info["overrides"].items(), key=str),
                        obs["candidates"].tobytes(), obs["nodes"].tobytes()))
        return out
    a, b = run(7), run(7)
    assert a == b
    assert run(8) != a


def test_every_registered_id_can_be_drawn():
    env = pool()
    seen = {env.draw_world()[0] for _ in range(400)}
    assert seen == set(IDS)
    for i in IDS:                              # and each one builds and resets, padded
        one = pool(ids=[i])
        obs, info = one.reset(seed=1)
        assert info["world"] == i and one.observation_space.contains(obs)


def test_cluster_size_is_randomised_within_max_nodes():
    env = pool(ids=["mrsched/Dedicated-v0"], vary={"cluster.size": [0.5, 1.5]}, max_nodes=22)
    sizes = set()
    for s in range(12):
        env.reset(seed=s)
        sizes.add(env.env.sim.n_nodes)
    assert len(sizes) > 3 and max(sizes) <= 22


def test_bad_worlds_config_names_the_field():
    with pytest.raises(ValueError, match="worlds.ids"):
        WorldsConfig(ids=["mrsched/Nope-v0"]).validate()
    with pytest.raises(ValueError, match="worlds.vary.colour"):
        WorldsConfig(ids=IDS, vary={"colour": [1, 2]}).validate()


def test_node_mask_ignores_padding_in_the_numpy_actor():
    """A node-masked set network gives the same logits with and without padded node rows."""
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    rng = np.random.default_rng(0)
    h, F, G, D, W = 8, 22, 10, 10, 4
    wts = {}
    for enc, sizes in {"node_enc": [G, h, h], "global_enc": [D + W + G + h, h],
                       "cand_enc": [F + h, h, h], "cand_mix": [2 * h, h]}.items():
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=False)):
            wts[f"{enc}.{2 * i}.weight"] = rng.normal(size=(b, a)).astype(np.float32)
            wts[f"{enc}.{2 * i}.bias"] = rng.normal(size=b).astype(np.float32)
    wts.update({"action_net.score.weight": rng.normal(size=(1, h)).astype(np.float32),
                "action_net.score.bias": np.zeros(1, np.float32),
                "action_net.skip.weight": rng.normal(size=(1, 2 * h)).astype(np.float32),
                "action_net.skip.bias": np.zeros(1, np.float32)})
    pol = NumpySetPolicy(wts, {"hidden": h, "work_conserving": False, "masked": True,
                               "forecast": W, "node_mask": True}, "t")
    obs = {"decision": rng.random(D, dtype=np.float32),
           "candidates": rng.random((8, F), dtype=np.float32),
           "nodes": rng.random((5, G), dtype=np.float32) + 0.1,
           "forecast": rng.random(W, dtype=np.float32)}
    padded = pad_observation(obs, 8, 12, W)
    np.testing.assert_allclose(pol.logits(obs), pol.logits(padded), rtol=1e-5)


def test_node_mask_ignores_padding_in_the_torch_extractor():
    """The torch SetExtractor with node_mask: padded node rows change nothing; without the mask
    they would (the plain mean counts them)."""
    th = pytest.importorskip("torch")
    import gymnasium as gym

    from mrsched_gym.agents.networks import SetExtractor

    def space(N):
        return gym.spaces.Dict({
            "decision": gym.spaces.Box(0, 10, (10,), np.float32),
            "candidates": gym.spaces.Box(-24, 100, (8, 22), np.float32),
            "nodes": gym.spaces.Box(0, 1, (N, 10), np.float32),
            "forecast": gym.spaces.Box(0, 1, (4,), np.float32)})
    th.manual_seed(0)
    rng = np.random.default_rng(1)
    obs = {"decision": rng.random(10, dtype=np.float32),
           "candidates": rng.random((8, 22), dtype=np.float32),
           "nodes": rng.random((5, 10), dtype=np.float32) + 0.1,
           "forecast": rng.random(4, dtype=np.float32)}
    padded = pad_observation(obs, 8, 12, 4)
    for mask in (True, False):
        fx = SetExtractor(space(5), hidden=8, node_mask=mask)
        with th.no_grad():
            a, b = (fx({k: th.as_tensor(v)[None] for k, v in o.items()}) for o in (obs, padded))
        assert th.allclose(a, b, atol=1e-6) == mask


def test_a_world_that_speculates_is_refused_with_its_reason():
    with pytest.raises(ValueError, match="Stragglers-v0.*speculation"):
        pool(ids=["mrsched/Hadoop-v0", "mrsched/Stragglers-v0"])


SCALED_DOWN = {"cluster.nodes": [{"count": 18, "cpu_cores": 8, "mem_gb": 16.0, "kind": "dedicated",
                                  "map_slots": 3, "reduce_slots": 1}],
               "workload.duration_s": 7200, "time_limit_s": 7200 + 86400,
               "decisions.max_candidates": 8}


def test_overrides_change_an_id_s_world_before_the_randomisation():
    """ThesisScale-v0 (100 nodes) does not fit a 25-node pool; scaled down by ``overrides`` it
    does, and every episode plays the changed world (then ``vary``)."""
    thesis = "mrsched/ThesisScale-v0"
    with pytest.raises(ValueError, match="max_nodes"):
        pool(ids=[thesis], vary={})
    env = pool(ids=[thesis, "mrsched/Hadoop-v0"], vary={"cluster.size": [1.0, 1.0]},
               overrides={thesis: SCALED_DOWN})
    assert env.K == 8
    seen = set()
    for s in range(6):
        _, info = env.reset(seed=s)
        seen.add(info["world"])
        if info["world"] == thesis:
            sc = env.env.sim.scenario
            assert (env.env.sim.n_nodes, env.env.K) == (18, 8)
            assert (sc.workload.duration_s, sc.time_limit_s) == (7200, 93600)
    assert thesis in seen
    assert env.bases["mrsched/Hadoop-v0"] == pool(ids=["mrsched/Hadoop-v0"]).bases[
        "mrsched/Hadoop-v0"]                   # the other ids are as registered


def test_bad_overrides_name_the_id():
    with pytest.raises(ValueError, match="worlds.overrides.mrsched/Dedicated-v0: must be a "
                                         "listed id"):
        WorldsConfig(ids=["mrsched/Hadoop-v0"],
                     overrides={"mrsched/Dedicated-v0": {"workload.load": 0.5}}).validate()
    with pytest.raises(ValueError, match="worlds.overrides.mrsched/Hadoop-v0: .*colour"):
        WorldsConfig(ids=["mrsched/Hadoop-v0"],
                     overrides={"mrsched/Hadoop-v0": {"workload.colour": 1}}).validate()


def test_vary_by_id_replaces_the_pool_s_ranges_for_that_id_only():
    """The thesis world (18 nodes by ``overrides``) drawn at 36-54 nodes (``cluster.size`` 2-3),
    Hadoop-v0 at its own size (the pool's 1.0); the other ranges stay the pool's."""
    thesis, hadoop = "mrsched/ThesisScale-v0", "mrsched/Hadoop-v0"
    env = pool(ids=[thesis, hadoop], max_nodes=60,
               vary={"cluster.size": [1.0, 1.0], "workload.load": [0.5, 0.5]},
               overrides={thesis: SCALED_DOWN}, vary_by_id={thesis: {"cluster.size": [2.0, 3.0]}})
    sizes = {thesis: set(), hadoop: set()}
    for s in range(12):
        _, info = env.reset(seed=s)
        sizes[info["world"]].add(env.env.sim.n_nodes)
        base_load = env.bases[info["world"]].workload.load
        assert env.env.sim.scenario.workload.load == pytest.approx(base_load * 0.5)
    assert sizes[thesis] and all(36 <= n <= 54 for n in sizes[thesis]), sizes
    assert sizes[hadoop] == {sum(g.count for g in env.bases[hadoop].cluster.nodes)}


def test_a_config_without_vary_by_id_draws_the_same_worlds_as_before():
    """``vary_by_id`` empty: the same draws, key for key, as ``vary`` alone (runs reproduce)."""
    kw = dict(ids=IDS[:3], vary={"workload.load": [0.75, 1.3], "cluster.size": [0.75, 1.25]})
    a, b = pool(**kw), pool(**kw, vary_by_id={})
    for s in range(4):
        assert a.reset(seed=s)[1]["overrides"] == b.reset(seed=s)[1]["overrides"]


@pytest.mark.parametrize("ranges, match", [
    ({"mrsched/Dedicated-v0": {"workload.load": [1, 2]}}, "vary_by_id.mrsched/Dedicated-v0: must "
                                                           "be a listed id"),
    ({"mrsched/Hadoop-v0": {"workload.colour": [1, 2]}}, "vary_by_id.mrsched/Hadoop-v0"
                                                         ".workload.colour: unknown"),
    ({"mrsched/Hadoop-v0": {"cluster.size": [2, 1]}}, "vary_by_id.mrsched/Hadoop-v0.cluster.size:"
                                                      " must be \\[lo, hi\\]"),
    ({"mrsched/Hadoop-v0": {"cluster.size": "big"}}, "cluster.size: must be"),
])
def test_bad_vary_by_id_names_the_id_and_field(ranges, match):
    with pytest.raises(ValueError, match=match):
        WorldsConfig(ids=["mrsched/Hadoop-v0"], vary_by_id=ranges).validate()
