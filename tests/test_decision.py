"""The decision contract (``mrsched_gym.sim.decision``): one typed value per decision, one part
per kind, the kind named in the observation, and the read-only view policies decide from."""

import dataclasses
import pickle

import pytest

from mrsched_gym.env.encoding import (
    DECISION_KIND_SLICE,
    ObservationEncoder,
    decision_kind_slot,
    observed_kind,
)
from mrsched_gym.evaluate import make_env
from mrsched_gym.sim.decision import (
    DECISION_NAMES,
    AdmitCandidate,
    Decision,
    DecisionKind,
    PreemptCandidate,
    Primitive,
    ScheduleCandidate,
    SpeculateCandidate,
)
from mrsched_gym.sim.engine import DECISION_PARTS
from mrsched_gym.sim.view import ClusterView, as_view

CANDIDATE_TYPE = {DecisionKind.SCHEDULE: ScheduleCandidate, DecisionKind.ADMIT: AdmitCandidate,
                  DecisionKind.PREEMPT: PreemptCandidate,
                  DecisionKind.SPECULATE: SpeculateCandidate}
#: The kinds each world poses (a random policy meets them all within its first 3000 steps).
KINDS_SEEN = {
    "mrsched/Preemption-v0": {DecisionKind.SCHEDULE, DecisionKind.PREEMPT},
    "mrsched/Admission-v1": {DecisionKind.SCHEDULE, DecisionKind.ADMIT},
    "mrsched/Stragglers-v0": {DecisionKind.SCHEDULE, DecisionKind.SPECULATE},
}
NODE_KINDS = (DecisionKind.SCHEDULE, DecisionKind.SPECULATE)


def test_every_kind_has_one_part_and_one_encoding():
    assert sorted(p.kind for p in DECISION_PARTS) == list(DecisionKind)
    assert sorted(ObservationEncoder.CANDIDATE_ROWS) == list(DecisionKind)
    assert [p.kind for p in DECISION_PARTS] == [DecisionKind.ADMIT, DecisionKind.PREEMPT,
                                               DecisionKind.SPECULATE,
                                               DecisionKind.SCHEDULE]      # the posing order
    assert DECISION_NAMES == ("schedule", "admit", "preempt", "speculate")
    assert [decision_kind_slot(k) for k in DecisionKind] == list(range(4))
    assert DECISION_KIND_SLICE == slice(0, 3)        # worlds without speculation


@pytest.mark.parametrize("env_id", sorted(KINDS_SEEN))
def test_every_decision_is_a_typed_value(env_id):
    env = make_env(env_id)
    obs, info = env.reset(seed=0)
    sim = env.unwrapped.sim
    seen = set()
    for step in range(3000):
        d = sim.decision
        assert isinstance(d, Decision) and d.time_s == sim.now
        assert observed_kind(obs["decision"]) == d.kind
        assert info["decision"] == DECISION_NAMES[d.kind] and info["node"] == d.node
        assert all(type(c) is CANDIDATE_TYPE[d.kind] for c in d.candidates)
        assert (d.node >= 0) == (d.kind in NODE_KINDS)
        assert (d.job is None) == (d.kind in NODE_KINDS)
        if d.kind == DecisionKind.ADMIT:
            assert d.candidates == (AdmitCandidate(d.job),)
        if d.kind == DecisionKind.PREEMPT:
            assert all(isinstance(c.primitive, Primitive) and c.task.job.priority
                       < d.job.priority for c in d.candidates)
        if d.kind == DecisionKind.SCHEDULE:
            c = d.candidates[0]
            job, phase, loc = c                    # candidates still unpack like tuples
            assert (job, phase, loc) == (c.job, c.phase, c.locality)
        assert (sim.kind, sim.node, sim.job, sim.candidates) == (d.kind, d.node, d.job,
                                                                 d.candidates)
        with pytest.raises(dataclasses.FrozenInstanceError):
            d.node = 3
        seen.add(d.kind)
        obs, _, term, trunc, info = env.step(step % (len(d.candidates) + 1) if d.candidates
                                             else sim.K)
        if term or trunc:
            break
    assert seen == KINDS_SEEN[env_id]
    if sim.done:
        assert sim.decision.candidates == () and observed_kind(obs["decision"]) is None


def test_the_decision_survives_pickling():
    env = make_env("mrsched/Preemption-v0")
    env.reset(seed=1)
    for _ in range(50):
        env.step(0)
    sim = env.unwrapped.sim
    clone = pickle.loads(pickle.dumps(sim))
    assert clone.decision.kind == sim.decision.kind
    assert [type(c) for c in clone.decision.candidates] == [
        type(c) for c in sim.decision.candidates]


def test_the_simulator_offers_every_member_of_the_view():
    env = make_env("mrsched/Hadoop-v0")
    env.reset(seed=0)
    sim = env.unwrapped.sim
    assert as_view(sim) is sim
    members = [m for m in vars(ClusterView) if not m.startswith("_")]
    assert len(members) > 30
    missing = [m for m in members if not hasattr(sim, m)]
    assert not missing, missing


def test_a_decision_is_an_immutable_value_compiled_or_not():
    """Written out rather than a frozen dataclass (a compiled-build speed-up), it keeps that
    class's behaviour: no field can be set or deleted, and it compares, hashes, prints, copies
    and pickles by its fields."""
    import copy
    env = make_env("mrsched/Hadoop-v0", {"workload.duration_s": 900})
    env.reset(seed=1)
    d = env.unwrapped.sim.decision
    for name in ("kind", "time_s", "node", "job", "candidates", "other"):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(d, name, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        del d.node
    same = Decision(d.kind, d.time_s, d.node, d.job, d.candidates)
    assert same == d and hash(same) == hash(d) and same is not d
    assert Decision(d.kind, d.time_s + 1.0, d.node, d.job, d.candidates) != d
    assert d != (d.kind, d.time_s, d.node, d.job, d.candidates)
    assert repr(d).startswith(f"Decision(kind={d.kind!r}, time_s={d.time_s!r}, node={d.node!r}")
    for twin in (copy.copy(d), copy.deepcopy(d), pickle.loads(pickle.dumps(d))):
        assert isinstance(twin, Decision) and (twin.kind, twin.time_s, twin.node) == (
            d.kind, d.time_s, d.node) and len(twin.candidates) == len(d.candidates)


def test_a_decision_matches_positional_class_patterns():
    env = make_env("mrsched/Hadoop-v0", {"workload.duration_s": 900})
    env.reset(seed=1)
    match env.unwrapped.sim.decision:
        case Decision(kind, time_s, node, _, candidates):
            assert (kind, time_s, node) == (DecisionKind.SCHEDULE, env.unwrapped.sim.now,
                                            env.unwrapped.sim.decision.node)
            assert candidates == env.unwrapped.sim.decision.candidates
        case _:
            pytest.fail("no match")
