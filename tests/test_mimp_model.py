"""MIMP's TCT model trained on observed task completions (baselines/mimp_model.py, MIMP 5.1):
the prior before any data, convergence to the observed durations, per-episode determinism."""

from __future__ import annotations

import numpy as np
import pytest

from mrsched_gym.baselines import make_baseline
from mrsched_gym.baselines.mimp_model import TCTModel, reference_tct
from mrsched_gym.config import scenario_from_dict
from mrsched_gym.env import MRSchedEnv
from mrsched_gym.evaluate import run_episode
from mrsched_gym.sim.state import MAP


def _world(shared: bool = False) -> MRSchedEnv:
    """One job of 24 equal maps on two nodes whose blocks all sit on node 0: node 1's maps read
    remotely, so observed map times exceed the uncontended reference."""
    sc = scenario_from_dict({
        "cluster": {"nodes": [{"count": 1, "map_slots": 2, "reduce_slots": 1},
                              {"count": 1, "map_slots": 2, "reduce_slots": 1,
                               "kind": "shared" if shared else "dedicated"}],
                    "task_demand_cv": 0.0, "replication": 1},
        "interference": {"load": "constant", "mean": 0.5, "noise": 0.0},
        "workload": {"kind": "jobs", "jobs": [
            {"type": "sort", "n_maps": 24, "n_reduces": 0, "work_cv": 0.0,
             "deadline_s": 5000.0}]},
        "time_limit_s": 50_000})
    return MRSchedEnv(sc)


def _play(env: MRSchedEnv, pol, seed: int = 0):
    env.reset(seed=seed)
    pol.reset(env.sim, seed)
    while True:
        _, _, term, trunc, info = env.step(pol.decide(env.sim))
        if term or trunc:
            return info["metrics"]


def test_prior_before_any_completion():
    env = _world()
    env.reset(seed=0)
    model = TCTModel()
    job = env.sim.jobs[0]
    for n in range(env.sim.n_nodes):
        assert model.factor(job.type_idx, env.sim.shared[n], MAP) == 1.0
        assert model.tct(env.sim, job, MAP, n) == reference_tct(env.sim, job, MAP, n)


def test_running_mean_with_prior_weight():
    model = TCTModel(prior_weight=2.0)
    model.observe(3, False, MAP, 4.0)
    assert model.factor(3, False, MAP) == pytest.approx((2.0 + 4.0) / 3.0)
    for _ in range(998):
        model.observe(3, False, MAP, 4.0)
    assert model.factor(3, False, MAP) == pytest.approx(4.0, rel=0.01)
    assert model.factor(3, True, MAP) == 1.0          # another node class: still the prior
    with pytest.raises(ValueError, match="prior_weight"):
        TCTModel(prior_weight=-1.0)


@pytest.mark.parametrize("shared", [False, True])
def test_trained_tct_converges_to_the_observed_durations(shared):
    """After an episode, with no prior weight, the trained TCT on each node class is the mean
    observed map time there (every map seen finishing); the reference was far from it."""
    env = _world(shared)
    pol = make_baseline("mp", prior_weight=0.0)
    _play(env, pol)
    pol.model.update(env.sim)                   # the completions after the last decision
    sim = env.sim
    job = sim.jobs[0]
    by_class: dict[bool, list[float]] = {}
    for start, end, _jid, node, phase, outcome in sim.task_log:
        if phase == MAP and outcome == "done":
            by_class.setdefault(sim.shared[node], []).append(end - start)
    assert sum(map(len, by_class.values())) == job.n_maps
    for cls, lens in by_class.items():
        node = 1 if cls else 0                    # node 1 is the shared one, if any
        ref = reference_tct(sim, job, MAP, node)  # constant load: the ref at every launch
        got = pol.model.factor(job.type_idx, cls, MAP)
        assert got * ref == pytest.approx(np.mean(lens), rel=1e-9)
        assert pol.model.counts[(job.type_idx, cls, MAP)] == len(lens)
    ref1 = reference_tct(sim, job, MAP, 1)
    assert max(by_class[sim.shared[1]]) > 1.1 * ref1   # the reference alone was optimistic


def test_trained_mp_is_deterministic_and_reset_per_episode():
    """The same seed gives the same records, whether the policy object is fresh or has played
    other episodes before (its model starts from the prior each episode)."""
    kw = {"workload.load": 0.5, "workload.duration_s": 1200}
    fresh = run_episode("mrsched/Shared-v1", make_baseline("mp"), 1, kw)["metrics"]
    pol = make_baseline("mp")
    run_episode("mrsched/Shared-v1", pol, 0, kw)
    again = run_episode("mrsched/Shared-v1", pol, 1, kw)["metrics"]
    fresh.pop("wall_s", None)
    again.pop("wall_s", None)
    assert fresh == again


def test_untrained_keeps_the_reference():
    env = _world(True)
    pol = make_baseline("mp", trained=False)
    _play(env, pol)
    assert pol.model.counts == {}
    job = env.sim.jobs[0]
    assert pol.tct(env.sim, job, MAP, 1) == reference_tct(env.sim, job, MAP, 1)
