"""The feature table (``mrsched_gym.env.features``) is the observation's one source: the encoding's
docstring names every feature at its index, the encoder's values stay within each feature's
bounds, and the Box spaces come from it."""

import re

import numpy as np
import pytest
from gymnasium import spaces

import mrsched_gym.env.encoding as encoding
from mrsched_gym.env.features import (
    CANDIDATE_COLUMNS,
    DECISION_TAIL_FEATURES,
    NODE_COLUMNS,
    OBJECTIVE_FEATURES,
    RATIO_MAX,
    TASK_HOURS_MAX,
    Feature,
)
from mrsched_gym.evaluate import make_env
from mrsched_gym.sim.decision import BASE_KINDS

DOC = " ".join(encoding.__doc__.split())          # whitespace collapsed: names wrap lines


def _section(key: str) -> str:
    """The docstring's paragraph about ``obs[key]``."""
    start = DOC.index(f"``{key}``")
    ends = [DOC.find(f"``{k}``", start + 1)
            for k in ("candidates", "nodes", "forecast", "objective")]
    return DOC[start:min([e for e in ends if e > start], default=len(DOC))]


@pytest.mark.parametrize("key,features,offset", [
    ("decision", DECISION_TAIL_FEATURES, len(BASE_KINDS)),
    ("candidates", CANDIDATE_COLUMNS, 0),
    ("nodes", NODE_COLUMNS, 0),
    ("objective", OBJECTIVE_FEATURES, 0),
])
def test_the_docstring_names_every_feature_at_its_index(key, features, offset):
    text = _section(key)
    for i, f in enumerate(features):
        pattern = rf"(^|[| ,]){i + offset} {re.escape(f.name)}"
        assert re.search(pattern, text), f"{key}: '{i + offset} {f.name}' not in the docstring"
    assert not re.search(rf"(^|\| ){len(features) + offset} ", text), f"{key}: extra feature"


def test_the_boxes_span_the_table_and_match_the_saved_agents_spaces():
    env = make_env("mrsched/Hadoop-v0")
    space = env.observation_space
    # the literal bounds shipped agents were saved with (SB3 compares spaces on load)
    assert space["decision"] == spaces.Box(0.0, 10.0, (10,), np.float32)
    assert space["candidates"] == spaces.Box(-24.0, 100.0, (8, 22), np.float32)
    assert space["nodes"] == spaces.Box(0.0, 1.0, (12, 10), np.float32)
    assert len(CANDIDATE_COLUMNS) == encoding.CANDIDATE_FEATURES
    assert len(NODE_COLUMNS) == encoding.NODE_FEATURES


def _bounds(features: tuple[Feature, ...]) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([f.low for f in features], np.float32),
            np.array([f.high for f in features], np.float32))


@pytest.mark.parametrize("env_id", ["mrsched/Hadoop-v0", "mrsched/Preemption-v0",
                                    "mrsched/Admission-v1", "mrsched/Dynamic-v0",
                                    "mrsched/Stragglers-v0", "mrsched/HadoopTrace-v0"])
def test_every_encoded_value_lies_within_its_features_bounds(env_id):
    env = make_env(env_id)
    rng = np.random.default_rng(1)
    c_lo, c_hi = _bounds(CANDIDATE_COLUMNS)
    n_lo, n_hi = _bounds(NODE_COLUMNS)
    d_lo, d_hi = _bounds(DECISION_TAIL_FEATURES)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        for _ in range(1500):
            dec = obs["decision"]
            kinds = encoding.kind_slice(dec)
            assert np.all((dec[kinds] == 0) | (dec[kinds] == 1))
            tail = dec[kinds.stop:]
            assert np.all((tail >= d_lo) & (tail <= d_hi)), (tail, d_lo, d_hi)
            cand = obs["candidates"]
            bad = (cand < c_lo) | (cand > c_hi)
            assert not bad.any(), [CANDIDATE_COLUMNS[j].name for j in np.flatnonzero(bad.any(0))]
            nodes = obs["nodes"]
            bad = (nodes < n_lo) | (nodes > n_hi)
            assert not bad.any(), [NODE_COLUMNS[j].name for j in np.flatnonzero(bad.any(0))]
            assert np.all((obs["forecast"] >= 0) & (obs["forecast"] <= 1))
            legal = np.flatnonzero(env.unwrapped.action_masks())
            obs, _, term, trunc, _ = env.step(int(rng.choice(legal)))
            if term or trunc:
                break


def test_the_env_docstring_states_the_table_s_shapes():
    from mrsched_gym.env import MRSchedEnv
    doc = MRSchedEnv.__doc__
    assert f"| ({encoding.DECISION_FEATURES},)" in doc
    assert f"({encoding.DECISION_FEATURES + 1},) when the scenario enables speculation" in doc
    assert f"| (K, {len(CANDIDATE_COLUMNS)})" in doc
    assert f"| (N, {len(NODE_COLUMNS)})" in doc


def _toy_with_own_means(scope: str):
    """Two jobs whose mean task work (600 s, 45 s) is not their types' profile means, and whose
    deadlines ``scope`` covers: the job or its maps."""
    from mrsched_gym.config import scenario_from_dict
    return scenario_from_dict({
        "cluster": {"nodes": [{"count": 2, "map_slots": 2, "reduce_slots": 1}]},
        "workload": {"kind": "jobs", "deadline_scope": scope, "jobs": [
            {"type": "piest", "n_maps": 12, "n_reduces": 2, "map_work_s": 600.0,
             "reduce_work_s": 45.0, "deadline_s": 9000.0},
            {"type": "wordcount", "n_maps": 6, "n_reduces": 1, "map_work_s": 45.0,
             "reduce_work_s": 600.0, "deadline_s": 4000.0, "arrival_s": 30.0}]},
        "time_limit_s": 20_000})


@pytest.mark.parametrize("world", ["mrsched/HadoopTrace-v0", "mrsched/ThesisScale-v0",
                                   "toy-job", "toy-map"])
def test_an_unobserved_phase_shows_the_work_its_job_expects(world):
    """Before a task of a job's phase has finished, the task-length feature (5) is the mean the
    phase's work was drawn around (``Job.expected_len``: a trace job's size-scaled mean, a job
    list's ``map_work_s``, the type's mean scaled by ``task_work_scale``), not the type's
    profile mean, and the slots-required feature (9) is computed from it. Checked where the two
    differ."""
    from mrsched_gym.env import MRSchedEnv
    from mrsched_gym.sim.decision import SCHEDULE
    if world.startswith("toy"):
        env = MRSchedEnv(_toy_with_own_means(world[4:]))
    else:
        env = make_env(world)
    obs, _ = env.reset(seed=3)
    sim = env.unwrapped.sim
    rng = np.random.default_rng(0)
    differs = slots_checked = 0
    for _ in range(400):
        d = sim.decision
        if d.kind == SCHEDULE:
            slots = env.unwrapped.encoder.total_slots
            for i, c in enumerate(d.candidates[:len(obs["candidates"])]):
                row, job = obs["candidates"][i], c.job
                if row[6] != 0.0:
                    continue                    # a finished task's length is observed
                expected = job.expected_len[c.phase]
                hours = min(expected / 3600.0, TASK_HOURS_MAX)
                assert row[5] == np.float32(hours), (job.jid, c.phase, row[5], expected)
                p = job.profile
                differs += abs(expected - (p.map_work_s, p.reduce_work_s)[c.phase]) > 1e-6
                if row[8] and job.deadline_s - sim.now > 1.0:
                    if world == "toy-map":
                        n_map = job.len_n[0]          # the maps' mean: observed if it can be
                        mean = job.len_sum[0] / n_map if n_map else job.expected_len[0]
                        due = (job.n_maps - job.maps_done) * mean
                    else:
                        due = (job.n_maps + job.n_reduces - job.maps_done
                               - job.reduces_done) * expected
                    want = due / (job.deadline_s - sim.now) / slots
                    assert row[9] == pytest.approx(min(want, RATIO_MAX), rel=1e-5)
                    slots_checked += 1
        legal = np.flatnonzero(env.unwrapped.action_masks())
        obs, _, term, trunc, _ = env.step(int(rng.choice(legal)))
        if term or trunc:
            break
    assert differs > 0, "no candidate whose expected work differs from its type's: vacuous"
    if world.startswith("toy"):                     # the toys' jobs all have deadlines
        assert slots_checked > 0, "the slots-required feature was never checked"
