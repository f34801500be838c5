"""The flat variants (``mrsched/<Name>-flat-vN``, mrsched_gym/env/flat.py): one Box observation,
every action legal, the base id's worlds; and the checkpoints trained on them or through
FlattenObservation ranked by the harness."""

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from mrsched_gym import ENV_IDS
from mrsched_gym.env.flat import FlatChoices, FlatEnv, base_id, flat_id, is_flat_id
from mrsched_gym.registration import FLAT_IDS

IDS = sorted(ENV_IDS)
#: The thesis-scale week, cut to two hours (as tests/test_env_api.py does).
SMALL = {"mrsched/ThesisScale-v0": {"workload__duration_s": 3600.0, "time_limit_s": 7200.0}}


def make_pair(env_id: str, **kwargs):
    kw = {**SMALL.get(env_id, {}), **kwargs}
    return gym.make(env_id, **kw), gym.make(flat_id(env_id), **kw)


def test_every_id_has_a_flat_variant_and_the_names_round_trip():
    assert sorted(FLAT_IDS.values()) == IDS
    for env_id in IDS:
        fid = flat_id(env_id)
        assert fid in gym.registry and is_flat_id(fid) and not is_flat_id(env_id)
        assert base_id(fid) == env_id and base_id(env_id) == env_id
    assert flat_id("mrsched/Shared-v12") == "mrsched/Shared-flat-v12"
    with pytest.raises(ValueError, match="versioned"):
        flat_id("mrsched/Hadoop")


@pytest.mark.parametrize("env_id", IDS)
def test_flat_variant_passes_gymnasium_checks(env_id):
    env = gym.make(flat_id(env_id), **SMALL.get(env_id, {}))
    assert isinstance(env.observation_space, gym.spaces.Box)
    assert env.action_space == gym.spaces.Discrete(env.unwrapped.K + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # "different from the unwrapped version"
        check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_flat_space_differs_from_flatten_observation(env_id):
    """The checkpoint's space tells a variant-trained model from a FlattenObservation one."""
    base = gym.make(env_id, **SMALL.get(env_id, {}))
    ours = FlatChoices(base.observation_space).observation_space
    theirs = gym.spaces.flatten_space(base.observation_space)
    assert ours.shape == theirs.shape
    assert not (np.array_equal(ours.low, theirs.low) and np.array_equal(ours.high, theirs.high))


@pytest.mark.parametrize("env_id", IDS)
def test_every_action_is_legal_and_plays_the_base_world(env_id):
    """Random actions over the whole space: never an invalid action; each plays a choice the
    base mask offers; replayed on the base id, the same rewards, steps and metrics; and the
    variant's observation is FlatChoices.observe of the base observation."""
    base, flat = make_pair(env_id)
    view = FlatChoices(base.observation_space)
    rng = np.random.default_rng(7)
    for seed in (0, 1):
        bo, _ = base.reset(seed=seed)
        fo, finfo = flat.reset(seed=seed)
        done, steps = False, 0
        while not done:
            mask = base.unwrapped.action_masks()
            assert np.array_equal(view.observe(bo, mask), fo)
            assert view.choices == finfo["choices"]
            a = int(rng.integers(flat.action_space.n))
            m = len(finfo["choices"])                    # this decision's choices
            fo, fr, fte, ftr, finfo = flat.step(a)
            played = finfo["played_action"]
            assert finfo["folded"] is (a >= m)
            assert mask[played] and not finfo["invalid_action"]
            assert played == finfo_choice(view, a)
            bo, br, bte, btr, binfo = base.step(played)
            assert (fr, fte, ftr) == (br, bte, btr)
            done = bte or btr
            steps += 1
        assert finfo["metrics"] == binfo["metrics"]
    assert steps > 5


def finfo_choice(view: FlatChoices, a: int) -> int:
    return view.choices[a % len(view.choices)]


def test_choices_are_ordered_by_urgency_at_schedule_decisions():
    env = gym.make("mrsched/Hadoop-flat-v0")
    obs, info = env.reset(seed=0)
    D = env.unwrapped.base_observation_space["decision"].shape[0]
    K, F = env.unwrapped.K, 22
    seen = 0
    for _ in range(300):
        n = sum(1 for c in info["choices"] if c < K)
        if info["decision"] == "schedule" and n > 1:
            ttd = obs[D + 7:D + n * F:F]
            assert np.all(np.diff(ttd) >= 0)
            seen += 1
        obs, _, te, tr, info = env.step(0)
        if te or tr:
            break
    assert seen > 20


def test_action_zero_is_edf_on_hadoop():
    """Action 0 always plays the most urgent candidate: EDF's order (the edf baseline)."""
    from mrsched_gym.evaluate import evaluate
    env = gym.make("mrsched/Hadoop-flat-v0")
    env.reset(seed=0)
    done = False
    while not done:
        _, _, te, tr, info = env.step(0)
        done = te or tr
    edf = evaluate(["edf"], ["mrsched/Hadoop-v0"], seeds=[0], progress=False, workers=1)[0]
    assert info["metrics"]["deadline_penalty_h"] == pytest.approx(edf["deadline_penalty_h"])


def test_same_seed_same_flat_episode():
    runs = []
    for _ in range(2):
        env = gym.make("mrsched/Admission-flat-v1")
        obs, _ = env.reset(seed=3)
        out = [obs.tobytes()]
        for a in range(200):
            obs, r, te, tr, _ = env.step(a % 9)
            out.append(obs.tobytes() + np.float64(r).tobytes())
            if te or tr:
                break
        runs.append(out)
    assert runs[0] == runs[1]


def test_bad_actions_and_wrapping_are_refused_clearly():
    env = gym.make("mrsched/Hadoop-flat-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="outside Discrete"):
        env.step(9)
    with pytest.raises(TypeError, match="integer"):
        env.step(1.5)
    assert env.unwrapped.action_masks().all() and isinstance(env.unwrapped, FlatEnv)
    with pytest.raises(ValueError, match="order"):
        gym.make("mrsched/Hadoop-flat-v0", order="fifo")


def test_module_prefixed_id_works_without_importing_the_package():
    """Tools that take only an id string (CleanRL's --env-id) use ``mrsched_gym:ID``."""
    code = ("import gymnasium as gym; e = gym.make('mrsched_gym:mrsched/Hadoop-flat-v0'); "
            "o, _ = e.reset(seed=0); print(o.shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(314,)"


def test_every_id_makes_resets_and_steps_under_warnings_as_errors():
    ids = [*IDS, *sorted(FLAT_IDS)]
    code = "\n".join([
        "import gymnasium as gym, torch, mrsched_gym",
        f"SMALL = {SMALL!r}",
        f"for i in {ids!r}:",
        "    e = gym.make(i, **SMALL.get(mrsched_gym.env.flat.base_id(i), {}))",
        "    e.reset(seed=0)",
        "    e.step(e.action_space.n - 1 if '-flat' in i else "
        "int(e.unwrapped.action_masks().nonzero()[0][0]))",
        "    e.close()",
        "print('ok')"])
    torch_there = subprocess.run([sys.executable, "-c", "import torch"]).returncode == 0
    if not torch_there:
        code = code.replace(", torch", "")
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "ok"
