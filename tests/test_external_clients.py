"""The RL libraries users already have train here by id alone, and what they train ranks:
SB3 PPO/A2C unmasked on a flat variant, SB3 through FlattenObservation on a base id, rl_zoo3
with the shipped hyperparameter file, and a CleanRL-shaped loop (written here, not copied) run by
the id string alone. Small versions of the guide's commands (docs/guide/train.md)."""

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import mrsched_gym  # noqa: F401
from mrsched_gym.evaluate import evaluate

torch = pytest.importorskip("torch")
sb3 = pytest.importorskip("stable_baselines3")
ROOT = Path(__file__).resolve().parents[1]
SEEDS = [0, 1]


def own_loop(model, env, seeds=SEEDS) -> list[float]:
    """The model's deterministic episodes in the env it was trained on."""
    out = []
    for s in seeds:
        obs, info = env.reset(seed=s)
        done = False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, te, tr, info = env.step(action)
            done = te or tr
        out.append(info["metrics"]["deadline_penalty_h"])
    return out


def harness(path: Path, env_id: str = "mrsched/Hadoop-v0") -> list[dict]:
    return evaluate([f"agent:{path}"], [env_id], seeds=SEEDS, progress=False, workers=1)


@pytest.mark.parametrize("algo", ["PPO", "A2C"])
def test_sb3_unmasked_on_a_flat_variant_ranks_on_the_base_id(tmp_path, algo):
    torch.set_num_threads(1)
    cls = getattr(sb3, algo)
    env = gym.make("mrsched/Hadoop-flat-v0")
    model = cls("MlpPolicy", env, seed=0, n_steps=128, device="cpu")
    model.learn(256)
    model.save(tmp_path / "m.zip")
    recs = harness(tmp_path / "m.zip")
    assert [r["observation"] for r in recs] == ["flat-variant"] * 2
    assert [r["invalid_actions"] for r in recs] == [0, 0]
    assert [r["deadline_penalty_h"] for r in recs] == pytest.approx(own_loop(model, env))


def test_flatten_observation_model_ranks_on_the_base_id(tmp_path):
    torch.set_num_threads(1)
    env = gym.wrappers.FlattenObservation(gym.make("mrsched/Hadoop-v0"))
    model = sb3.PPO("MlpPolicy", env, seed=0, n_steps=128, device="cpu")
    model.learn(128)
    model.save(tmp_path / "f.zip")
    recs = harness(tmp_path / "f.zip")
    assert [r["observation"] for r in recs] == ["FlattenObservation"] * 2
    assert [r["invalid_actions"] for r in recs] == [0, 0]
    from mrsched_gym.agents.flat_agent import flat_logits
    expected = []
    for s in SEEDS:                  # the model's most likely legal action, in our own loop
        obs, info = env.reset(seed=s)
        done = False
        while not done:
            logits = flat_logits(model.policy, obs)
            mask = env.unwrapped.action_masks()
            obs, _, te, tr, info = env.step(int(np.argmax(np.where(mask, logits, -np.inf))))
            done = te or tr
        expected.append(info["metrics"]["deadline_penalty_h"])
    assert [r["deadline_penalty_h"] for r in recs] == pytest.approx(expected)


def test_a_box_model_of_another_world_is_refused_up_front(tmp_path):
    from mrsched_gym.errors import InputError
    torch.set_num_threads(1)
    model = sb3.PPO("MlpPolicy", gym.make("mrsched/Dedicated-flat-v0"), n_steps=64,
                    batch_size=64, device="cpu")
    model.save(tmp_path / "d.zip")
    with pytest.raises(InputError, match="neither of which matches"):
        from mrsched_gym.evaluate.sweeping import sweep_tasks
        sweep_tasks([f"agent:{tmp_path / 'd.zip'}"], ["mrsched/Hadoop-v0"], [0])


@pytest.mark.slow
def test_rl_zoo3_trains_by_id_with_the_shipped_file_and_ranks(tmp_path):
    pytest.importorskip("rl_zoo3")
    cmd = [sys.executable, "-m", "rl_zoo3.train", "--algo", "ppo",
           "--env", "mrsched/Hadoop-flat-v0", "--gym-packages", "mrsched_gym",
           "--conf-file", "mrsched_gym.configs.rl_zoo3", "-n", "512",
           "--seed", "0", "-f", str(tmp_path / "logs"), "--hyperparams", "n_steps:256"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env={**__import__("os").environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    zips = list((tmp_path / "logs" / "ppo").glob("mrsched-Hadoop-flat-v0_*/*.zip"))
    assert len(zips) == 1
    recs = harness(zips[0])
    assert [r["observation"] for r in recs] == ["flat-variant"] * 2
    model = sb3.PPO.load(zips[0], device="cpu")
    assert [r["deadline_penalty_h"] for r in recs] == pytest.approx(
        own_loop(model, gym.make("mrsched/Hadoop-flat-v0")))


def test_a_cleanrl_shaped_ppo_loop_runs_on_the_id_string_alone():
    """CleanRL's ppo.py shape: envs from the id string through gym.make in a SyncVectorEnv
    (no import of the package first), shapes from single_observation_space, a categorical
    policy sampling over the whole action space, one PPO update."""
    torch.set_num_threads(1)
    nn = torch.nn
    env_id = "mrsched_gym:mrsched/Hadoop-flat-v0"

    def make_env():
        return lambda: gym.wrappers.RecordEpisodeStatistics(gym.make(env_id))

    envs = gym.vector.SyncVectorEnv([make_env() for _ in range(2)])
    n_obs = int(np.prod(envs.single_observation_space.shape))
    n_act = envs.single_action_space.n
    actor = nn.Sequential(nn.Linear(n_obs, 64), nn.Tanh(), nn.Linear(64, n_act))
    critic = nn.Sequential(nn.Linear(n_obs, 64), nn.Tanh(), nn.Linear(64, 1))
    params = [*actor.parameters(), *critic.parameters()]
    opt = torch.optim.Adam(params, lr=2.5e-4, eps=1e-5)
    obs, _ = envs.reset(seed=0)
    steps, buf = 64, []
    for _ in range(steps):
        o = torch.as_tensor(obs)
        dist = torch.distributions.Categorical(logits=actor(o))
        a = dist.sample()
        nxt, r, te, tr, info = envs.step(a.numpy())
        assert not np.any(info["invalid_action"])
        buf.append((o, a, dist.log_prob(a).detach(), torch.as_tensor(r, dtype=torch.float32)))
        obs = nxt
    o, a, logp, r = (torch.stack(x) for x in zip(*buf, strict=True))
    ret = torch.flip(torch.cumsum(torch.flip(r, [0]), 0), [0])
    v = critic(o).squeeze(-1)
    adv = (ret - v).detach()
    new = torch.distributions.Categorical(logits=actor(o)).log_prob(a)
    ratio = (new - logp).exp()
    loss = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() + ((ret - v) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    assert torch.isfinite(loss)
    envs.close()


SMALL = {"mrsched/ThesisScale-v0": {"workload__duration_s": 3600.0, "time_limit_s": 7200.0}}


@pytest.mark.parametrize("env_id", sorted(mrsched_gym.ENV_IDS))
def test_every_suite_id_ranks_variant_and_flatten_models(tmp_path, env_id):
    """On every id of the suite: a model of the flat variant plays the base id's world as in its
    own env (seed 0), and a FlattenObservation model is recognised as such."""
    from mrsched_gym.agents.policy import load_agent
    from mrsched_gym.env.flat import flat_id
    torch.set_num_threads(1)
    kw = SMALL.get(env_id, {})
    flat = gym.make(flat_id(env_id), **kw)
    sb3.PPO("MlpPolicy", flat, seed=0, n_steps=64, batch_size=64,
            device="cpu").save(tmp_path / "v.zip")
    model = sb3.PPO.load(tmp_path / "v.zip", device="cpu")
    recs = evaluate([f"agent:{tmp_path / 'v.zip'}"], [env_id], seeds=[0], progress=False,
                    workers=1, env_kwargs=kw)
    head = flat.unwrapped.headline_metric
    assert recs[0]["observation"] == "flat-variant"
    obs, info = flat.reset(seed=0)
    done = False
    while not done:
        obs, _, te, tr, info = flat.step(model.predict(obs, deterministic=True)[0])
        done = te or tr
    assert recs[0][head] == pytest.approx(info["metrics"][head])
    base = gym.make(env_id, **kw)
    sb3.PPO("MlpPolicy", gym.wrappers.FlattenObservation(base), n_steps=64, batch_size=64,
            device="cpu").save(tmp_path / "f.zip")
    agent = load_agent(tmp_path / "f.zip", one_thread=False)
    assert agent.layout(base.observation_space, env_id) == "FlattenObservation"
