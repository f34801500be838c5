"""Speed and memory benchmark (not a test): decisions/s, simulated tasks/s, reset time, peak RSS.

Usage::

    python benchmarks/bench.py                 # default scenario + thesis-scale week
    python benchmarks/bench.py --quick         # fewer episodes
    python benchmarks/bench.py --every-id      # the random row on every registered id
    python benchmarks/bench.py --flat          # the flat variants' cost per step vs their base ids
    python benchmarks/bench.py --flat --callgrind   # ... in instructions (valgrind), Hadoop-v0
    python benchmarks/bench.py --profile       # cProfile of the default scenario's hot loop
    python benchmarks/bench.py --profile thesis  # the same for the thesis-scale week
    python benchmarks/bench.py --agents        # + the shipped agent's inference and training
    python benchmarks/bench.py --agents --quick  # the same, shorter
    python benchmarks/bench.py --baselines     # seconds per episode of the slow baselines vs EDF
    python benchmarks/bench.py --compare REF   # this working tree vs git REF, side by side
    python benchmarks/bench.py --compare REF --compiled --callgrind  # ... its compiled build,
                                                 # + instructions per decision (valgrind)
    python benchmarks/bench.py --compare REF --against REV  # two git revisions side by side
    python benchmarks/bench.py --compare REF --compiled --ref-compiled  # both sides compiled
    python benchmarks/bench.py --compare REF --train   # the same for training (env steps/s)

Each scenario runs in its own process so peak memory (max RSS) is per scenario.
Policies: ``random`` = uniform over legal actions through ``env.step`` (observation, mask and
reward built every step); ``fifo-sim`` = first candidate through the simulator directly (what a
baseline costs without observation encoding); ``fifo-env`` = first candidate through ``env.step``;
``agent`` = the shipped agent (``agent:hadoop-v0``, one torch thread) through ``env.step``;
``agent-numpy`` = the same agent's numpy forward pass (what the leaderboard runs, no torch);
``train`` = MaskablePPO with the shipped config (4 in-process envs, one thread) learning for
the given number of steps (rollouts and gradient updates; no evaluations), ``train-fast`` the
same with ``numerics: fast`` (numpy rollouts, split layers; see ``agents/training/train.py``).

``--agents`` also times the forward pass alone (``inference``): the shipped agent's decisions
on recorded observations of Hadoop-v0 (two episodes), torch and numpy alternating round by
round in one process, each policy's best round; and it reports every row's decisions per
CPU-second beside the wall-clock rate (on a shared machine the CPU rate is the steadier one;
for training it is the env steps per second per core).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import time

import numpy as np


def _bench(env_id: str, policy: str, episodes: int, seed: int, kwargs: dict) -> dict:
    import gymnasium as gym

    import mrsched_gym  # noqa: F401

    if policy in ("train", "train-fast"):
        return _bench_train(env_id, episodes, "fast" if policy == "train-fast" else "exact")
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(seed)
    if policy == "agent":
        from mrsched_gym.agents.policy import load_agent
        from mrsched_gym.agents.pretrained import pretrained_path
        agent = load_agent(pretrained_path("hadoop-v0"))
    elif policy == "agent-numpy":
        from mrsched_gym.agents.numpy_policy import NumpySetPolicy
        from mrsched_gym.agents.pretrained import pretrained_numpy_path
        agent = NumpySetPolicy.load(pretrained_numpy_path("hadoop-v0"))
    steps = tasks = 0
    t_reset = t_run = cpu_run = 0.0
    sim_time = 0.0
    for ep in range(episodes):
        t0 = time.perf_counter()
        obs, _ = env.reset(seed=seed + ep)
        t1, c1 = time.perf_counter(), time.process_time()
        t_reset += t1 - t0
        u = env.unwrapped
        sim = u.sim
        K = u.K
        if policy == "fifo-sim":
            while not sim.done:
                sim.act(0 if sim.candidates else K)
                steps += 1
        else:
            while True:
                if policy == "random":
                    n = len(sim.candidates)
                    a = int(rng.integers(n)) if n else K
                elif policy in ("agent", "agent-numpy"):
                    a = agent.act(obs, u.action_masks())
                else:
                    a = 0 if sim.candidates else K
                obs, _, term, trunc, _ = env.step(a)
                steps += 1
                if term or trunc:
                    break
        t_run += time.perf_counter() - t1
        cpu_run += time.process_time() - c1
        tasks += sum(1 for rec in sim.task_log if rec[5] == "done")
        sim_time += sim.now
    return {"env": env_id, "policy": policy, "episodes": episodes, "decisions": steps,
            "decisions_per_s": steps / t_run, "decisions_per_cpu_s": steps / cpu_run,
            "tasks_per_s": tasks / t_run,
            "sim_days_per_s": sim_time / 86400 / t_run, "run_s_per_episode": t_run / episodes,
            "reset_s": t_reset / episodes,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _bench_train(env_id: str, steps: int, numerics: str = "exact") -> dict:
    import torch

    from mrsched_gym.agents.training.train import build_model, load_config, make_vec_env
    torch.set_num_threads(1)
    cfg = load_config("hadoop_set", env=env_id, total_timesteps=steps, tensorboard=False,
                      numerics=numerics)
    model = build_model(cfg, make_vec_env(cfg))
    env_cpu = _time_env_calls()
    t0, c0 = time.perf_counter(), time.process_time()
    model.learn(steps)
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    n = model.num_timesteps
    return {"env": env_id, "policy": "train" if numerics == "exact" else "train-fast",
            "episodes": 0, "decisions": n, "decisions_per_s": n / dt, "decisions_per_cpu_s": n / dc,
            "env_cpu_share": env_cpu[0] / dc,
            "tasks_per_s": float("nan"), "sim_days_per_s": 0.0,
            "run_s_per_episode": float("nan"), "reset_s": float("nan"),
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _time_env_calls() -> list[float]:
    """Make every ``MRSchedEnv.step``/``reset`` in this process add its CPU seconds to the
    returned one-element list (the env's share of a training run: the rest is the learner's
    rollout bookkeeping, forward passes and gradient updates). The bench runs each row in a
    process of its own, so the patch ends with it."""
    from mrsched_gym.env import MRSchedEnv
    spent = [0.0]
    clock = time.process_time

    def timed(method):
        def call(self, *args, **kwargs):
            c = clock()
            try:
                return method(self, *args, **kwargs)
            finally:
                spent[0] += clock() - c
        return call
    MRSchedEnv.step = timed(MRSchedEnv.step)
    MRSchedEnv.reset = timed(MRSchedEnv.reset)
    return spent


def bench_inference(rounds: int = 5, seeds: tuple[int, ...] = (0, 1)) -> list[dict]:
    """The shipped agent's forward pass alone, torch against numpy, on the observations of
    ``seeds``' episodes of Hadoop-v0 (recorded once, the numpy agent acting): each round times
    both policies over every decision (alternating, so machine noise hits both alike); a
    policy's figure is its best round (wall clock and CPU). Also counts the decisions where
    the two disagree (0 expected)."""
    import gymnasium as gym
    import torch

    import mrsched_gym  # noqa: F401
    from mrsched_gym.agents.numpy_policy import NumpySetPolicy
    from mrsched_gym.agents.policy import load_agent
    from mrsched_gym.agents.pretrained import pretrained_numpy_path, pretrained_path
    torch.set_num_threads(1)
    agents = {"torch": load_agent(pretrained_path("hadoop-v0")),
              "numpy": NumpySetPolicy.load(pretrained_numpy_path("hadoop-v0"))}
    env = gym.make("mrsched/Hadoop-v0")
    record = []
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        while True:
            mask = env.unwrapped.action_masks()
            record.append(({k: v.copy() for k, v in obs.items()}, mask))
            obs, _, term, trunc, _ = env.step(agents["numpy"].act(obs, mask))
            if term or trunc:
                break
    differ = sum(agents["torch"].act(o, m) != agents["numpy"].act(o, m) for o, m in record)
    wall = {k: [] for k in agents}
    cpu = {k: [] for k in agents}
    for _ in range(rounds):
        for name, pol in agents.items():
            t0, c0 = time.perf_counter(), time.process_time()
            for o, m in record:
                pol.act(o, m)
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    n = len(record)
    rows = [{"policy": f"agent ({name})", "decisions": n, "rounds": rounds,
             "us_per_decision": min(wall[name]) / n * 1e6,
             "decisions_per_s": n / min(wall[name]), "decisions_per_cpu_s": n / min(cpu[name]),
             "disagreements": differ} for name in agents]
    for r in rows:
        r["vs_torch"] = r["decisions_per_cpu_s"] / rows[0]["decisions_per_cpu_s"]
    return rows


#: (scenario, policies) of the ``--baselines`` rows: the optimising baselines against EDF.
BASELINE_ROWS = (
    ("mrsched/Hadoop-v0", ("edf", "rds", "reverse-adaptive")),
    ("mrsched/HadoopTrace-v0", ("edf", "rds", "reverse-adaptive")),
    ("mrsched/GreenTrace-v0", ("edf", "rds", "reverse-adaptive")),
)


def bench_baselines(seeds: list[int]) -> list[dict]:
    """Seconds per episode of each policy, through the evaluation harness's episode runner with
    one BLAS thread (as ``compare`` runs them). Policies alternate seed by seed, so machine noise
    hits them alike; the ratio to EDF is measured side by side in this one run."""
    from threadpoolctl import threadpool_limits

    from mrsched_gym.evaluate import make_policy, run_episode
    rows = []
    with threadpool_limits(limits=1):
        for env_id, policies in BASELINE_ROWS:
            run_episode(env_id, make_policy("edf"), seeds[0])          # warm caches and imports
            wall = {p: [] for p in policies}
            for seed in seeds:
                for p in policies:
                    t0 = time.perf_counter()
                    run_episode(env_id, make_policy(p), seed)
                    wall[p].append(time.perf_counter() - t0)
            edf = float(np.mean(wall["edf"]))
            for p in policies:
                rows.append({"env": env_id, "policy": p, "seeds": len(seeds),
                             "s_per_episode": float(np.mean(wall[p])),
                             "max_s": float(np.max(wall[p])),
                             "vs_edf": float(np.mean(wall[p])) / edf})
    return rows


#: What ``--compare`` times in each checkout, through the public API only (so any two commits
#: can be compared; ``harness:`` rows need ``evaluate.run_episode`` and ``make_policy``):
#: ``(env id, policy, episodes)``; ``random`` = uniform over the legal actions, ``first`` = the
#: first legal action, both through ``env.step``; ``harness:NAME`` = the baseline NAME as the
#: harness runs it (``evaluate.run_episode``, resets included).
COMPARE_ROWS = (("mrsched/Hadoop-v0", "random", 10), ("mrsched/ThesisScale-v0", "first", 1),
                ("mrsched/Hadoop-v0", "harness:edf", 10))

_COMPARE_SCRIPT = """
import json, sys, time
import numpy as np
import gymnasium as gym
import mrsched_gym
env_id, policy, episodes = sys.argv[1], sys.argv[2], int(sys.argv[3])
kwargs = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
steps, run, cpu = 0, 1e-9, 1e-9
if policy.startswith("harness:"):                # a baseline as the harness runs it
    from mrsched_gym.evaluate import make_policy, run_episode
    t0, c0 = time.perf_counter(), time.process_time()
    for ep in range(episodes):
        steps += run_episode(env_id, make_policy(policy[len("harness:"):]), ep)["steps"]
    run, cpu = time.perf_counter() - t0, time.process_time() - c0
else:
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(0)
    for ep in range(episodes):
        env.reset(seed=ep)
        u = env.unwrapped
        t0, c0 = time.perf_counter(), time.process_time()
        while True:
            legal = np.flatnonzero(u.action_masks())
            a = int(legal[0] if policy == "first" else rng.choice(legal))
            _, _, term, trunc, _ = env.step(a)
            steps += 1
            if term or trunc:
                break
        run += time.perf_counter() - t0
        cpu += time.process_time() - c0
accel = getattr(mrsched_gym, "acceleration", lambda: "python")()
print(json.dumps({"decisions": steps, "decisions_per_s": steps / run,
                  "decisions_per_cpu_s": steps / cpu, "acceleration": accel}))
"""

#: ``--compare REF --callgrind``: (env id, policy, (short, long) episodes, make() overrides):
#: instructions per decision = (Ir of the long run - Ir of the short run) / (decisions between),
#: so imports, building the env and the first resets cancel out. The thesis week is cut to its
#: first 3 hours (a whole week under valgrind takes hours).
CALLGRIND_ROWS = (("mrsched/Hadoop-v0", "random", (1, 4), {}),
                  ("mrsched/ThesisScale-v0", "first", (0, 1), {"workload__duration_s": 10800}))

#: ``--compare REF --train``: (label, numerics in REF, numerics in this checkout, env steps).
#: ``train-fast`` sets this checkout's ``numerics: fast`` against REF's default training.
COMPARE_TRAIN_ROWS = (("train", "exact", "exact", 4096 * 4),
                      ("train-fast", "exact", "fast", 4096 * 4))

_COMPARE_TRAIN_SCRIPT = """
import json, sys, time
import torch
torch.set_num_threads(1)
from mrsched_gym.agents.training.train import build_model, load_config, make_vec_env
steps, numerics = int(sys.argv[1]), sys.argv[2]
kw = {} if numerics == "exact" else {"numerics": numerics}
cfg = load_config("hadoop_set", total_timesteps=steps, tensorboard=False, **kw)
model = build_model(cfg, make_vec_env(cfg))
t0, c0 = time.perf_counter(), time.process_time()
model.learn(steps)
n = model.num_timesteps
print(json.dumps({"decisions": n, "decisions_per_s": n / (time.perf_counter() - t0),
                  "decisions_per_cpu_s": n / (time.process_time() - c0)}))
"""

_OVERLAY = """
import sys
from importlib.util import spec_from_file_location
ROOT = {root!r}
MAP = {{"mrsched_gym." + p: ROOT + "/" + p for p in ("baselines", "agents", "configs")}}
class Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name in MAP:
            return spec_from_file_location(name, MAP[name] + "/__init__.py",
                                           submodule_search_locations=[MAP[name]])
        return None
sys.meta_path.insert(0, Finder)
"""


def _time_checkout(root: str, overlay: str, row: tuple, script: str = _COMPARE_SCRIPT,
                   prefix: tuple[str, ...] = ()) -> dict:
    """One measurement of ``row`` in a fresh interpreter running the checkout at ``root`` (its
    top-level package folders mapped the way the install maps them), under ``prefix`` (e.g.
    valgrind) if given."""
    import os
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": f"{overlay}:{root}", "OMP_NUM_THREADS": "1"}
    args = [a if isinstance(a, str) else json.dumps(a) if isinstance(a, dict) else str(a)
            for a in row]
    out = subprocess.run([*prefix, sys.executable, "-c", script, *args], env=env,
                         capture_output=True, text=True, cwd=root)
    if out.returncode:
        raise RuntimeError(f"{root}: {' '.join(map(str, row))} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _instructions(root: str, overlay: str, row: tuple) -> tuple[int, int]:
    """``(instructions, decisions)`` of ``row`` run under ``valgrind --tool=callgrind``."""
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        out_file = str(Path(tmp) / "callgrind.out")
        got = _time_checkout(root, overlay, row, prefix=(
            "valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"))
        for line in Path(out_file).read_text().splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1]), got["decisions"]
    raise RuntimeError(f"no instruction count in callgrind's output for {row}")


def callgrind_rows(sides: dict[str, tuple[str, str]]) -> list[dict]:
    """Instructions per decision (:data:`CALLGRIND_ROWS`) of each side: deterministic, unlike
    the timings, so one run each suffices."""
    import shutil
    if shutil.which("valgrind") is None:
        return [{"env": env_id, "policy": policy, "note": "valgrind not installed"}
                for env_id, policy, _, _ in CALLGRIND_ROWS]
    rows = []
    for env_id, policy, (short, long), kwargs in CALLGRIND_ROWS:
        per = {}
        for name, (root, ov) in sides.items():
            i0, d0 = _instructions(root, ov, (env_id, policy, short, kwargs))
            i1, d1 = _instructions(root, ov, (env_id, policy, long, kwargs))
            per[name] = ((i1 - i0) / (d1 - d0), d1 - d0)
        rows.append({"env": env_id, "policy": policy, "overrides": kwargs,
                     "decisions": per["this"][1],
                     "ref_instructions_per_decision": per["ref"][0],
                     "this_instructions_per_decision": per["this"][0],
                     "ratio": per["ref"][0] / per["this"][0]})
    return rows


def _checkout(here: str, rev: str | None, dest: str, compile_it: bool) -> str:
    """A copy of git ``rev`` (``None``: the working tree's tracked and untracked files, not the
    ignored ones) in ``dest``; with ``compile_it`` built with the optional compiled build
    (``setup.py``, ``MRSCHED_GYM_COMPILE=1``). Returns ``dest``."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    Path(dest).mkdir(parents=True)
    if rev is None:
        files = subprocess.run(["git", "-C", here, "ls-files", "-co", "--exclude-standard", "-z"],
                               capture_output=True, check=True).stdout.decode().split("\0")
        for f in filter(None, files):
            if (Path(here) / f).is_file():
                (Path(dest) / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(Path(here) / f, Path(dest) / f)
    else:
        tree = subprocess.run(["git", "-C", here, "archive", rev], check=True,
                              capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", dest], input=tree, check=True)
    if compile_it:
        built = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"],
                               cwd=dest, capture_output=True, text=True,
                               env={**os.environ, "MRSCHED_GYM_COMPILE": "1"})
        if built.returncode:
            raise RuntimeError(f"the compiled build failed:\n{built.stderr[-3000:]}")
    return dest


def compare_checkouts(ref: str, rounds: int, train: bool = False, against: str | None = None,
                      compiled: bool = False, callgrind: bool = False,
                      ref_compiled: bool = False) -> list[dict]:
    """Decisions/s of this checkout and of git ``ref``, timed alternately (ref, this, ref, ...)
    so machine noise hits both alike; the ratio is this / ref of the medians. Both wall-clock
    decisions/s and decisions per CPU-second (``time.process_time``) are reported: on a loaded
    machine the CPU-time ratio is the steadier one (it does not count time spent waiting for
    a core). With ``train``, the rows are :data:`COMPARE_TRAIN_ROWS` instead: env steps per
    second of the shipped training config (one thread, the public training API).

    "This" side is the working tree, or git ``against`` if given; with ``compiled`` it runs the
    optional compiled build (built in a copy first), and with ``ref_compiled`` so does the ref
    side (a change of the compiled build against its own past). With ``callgrind`` the rows of
    :func:`callgrind_rows` follow (``"kind": "callgrind"``)."""
    import subprocess
    import tempfile
    from pathlib import Path
    here = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True,
                          text=True, check=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        other = _checkout(here, ref, str(Path(tmp) / "ref"), ref_compiled)
        mine = (_checkout(here, against, str(Path(tmp) / "this"), compiled)
                if against is not None or compiled else here)
        overlays = {}
        for name, root in (("ref", other), ("this", mine)):
            d = Path(tmp) / f"overlay-{name}"
            d.mkdir()
            (d / "sitecustomize.py").write_text(_OVERLAY.format(root=root))
            overlays[name] = (root, str(d))
        plan = ([(("mrsched/Hadoop-v0", label), _COMPARE_TRAIN_SCRIPT,
                  {"ref": (steps, ref_num), "this": (steps, this_num)})
                 for label, ref_num, this_num, steps in COMPARE_TRAIN_ROWS] if train else
                [(row[:2], _COMPARE_SCRIPT, {"ref": row, "this": row})
                 for row in COMPARE_ROWS])
        for (env_id, label), script, args in plan if rounds > 0 else ():
            wall: dict[str, list[float]] = {"ref": [], "this": []}
            cpu: dict[str, list[float]] = {"ref": [], "this": []}
            accel = {}
            for _ in range(rounds):
                for name in ("ref", "this"):
                    root, ov = overlays[name]
                    out = _time_checkout(root, ov, args[name], script)
                    wall[name].append(out["decisions_per_s"])
                    cpu[name].append(out["decisions_per_cpu_s"])
                    accel[name] = out.get("acceleration", "python")
            med = {k: float(np.median(v)) for k, v in wall.items()}
            mcpu = {k: float(np.median(v)) for k, v in cpu.items()}
            pair = [t / r for t, r in zip(cpu["this"], cpu["ref"], strict=True)]
            rows.append({"env": env_id, "policy": label, "rounds": rounds,
                         "ref_build": accel.get("ref", "python"),
                         "this_build": accel.get("this", "python"),
                         "ref_decisions_per_s": med["ref"],
                         "this_decisions_per_s": med["this"],
                         "speedup": med["this"] / med["ref"],
                         "ref_decisions_per_cpu_s": mcpu["ref"],
                         "this_decisions_per_cpu_s": mcpu["this"],
                         "cpu_speedup": mcpu["this"] / mcpu["ref"],
                         "cpu_speedup_min": min(pair), "cpu_speedup_max": max(pair)})
        if callgrind and not train:
            rows += [{"kind": "callgrind", **r} for r in callgrind_rows(overlays)]
    return rows


def _worker(args, q):
    q.put(_bench(*args))


def _inference_worker(rounds, q):
    q.put(bench_inference(rounds))


def _in_process(target, payload):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(payload, q))
    p.start()
    out = q.get()
    p.join()
    return out


def run_isolated(*args) -> dict:
    """One row of the table, in a fresh process (its own peak memory)."""
    return _in_process(_worker, args)


def run_inference(rounds: int) -> list[dict]:
    """:func:`bench_inference` in a fresh process."""
    return _in_process(_inference_worker, rounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--profile", nargs="?", const="hadoop", choices=("hadoop", "thesis"),
                    help="cProfile of Hadoop-v0 random (default) or the thesis week, first "
                         "legal action, through env.step")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--agents", action="store_true", help="add the agent and training rows")
    ap.add_argument("--baselines", action="store_true",
                    help="only the per-episode time of the optimising baselines vs EDF")
    ap.add_argument("--compare", metavar="REF",
                    help="time this checkout against git REF (e.g. HEAD~1), alternately")
    ap.add_argument("--rounds", type=int, default=3,
                    help="--compare: alternations per row (0: none, e.g. with --callgrind)")
    ap.add_argument("--train", action="store_true",
                    help="--compare: time training (env steps/s, the shipped config) instead")
    ap.add_argument("--against", metavar="REV",
                    help="--compare: git REV as this side instead of the working tree")
    ap.add_argument("--compiled", action="store_true",
                    help="--compare: this side runs the optional compiled build (setup.py; "
                         "needs mypy and a C compiler), built in a copy first")
    ap.add_argument("--ref-compiled", action="store_true",
                    help="--compare: the ref side runs its compiled build too")
    ap.add_argument("--every-id", action="store_true",
                    help="the random row (decisions/s, tasks/s, peak memory) on every registered "
                         "id (2 episodes each, 1 for the thesis week) instead of the default rows")
    ap.add_argument("--flat", action="store_true",
                    help="the flat variants' cost per step against their base ids, side by side "
                         "(benchmarks/flat_bench.py)")
    ap.add_argument("--callgrind", action="store_true",
                    help="--compare: also instructions per decision of both sides (valgrind); "
                         "with --flat: the variant's and the base id's instructions per step")
    a = ap.parse_args()
    if a.flat and a.callgrind:
        from flat_bench import callgrind_flat, print_callgrind
        row = callgrind_flat()
        print(json.dumps(row, indent=2)) if a.json else print_callgrind(row)
        return
    if a.flat:
        from flat_bench import bench_flat, print_rows
        rows = bench_flat(rounds=3 if a.quick else max(a.rounds, 5))
        print(json.dumps(rows, indent=2)) if a.json else print_rows(rows)
        return
    if a.compare:
        rows = compare_checkouts(a.compare, a.rounds, a.train, a.against, a.compiled,
                                 a.callgrind, a.ref_compiled)
        if a.json:
            print(json.dumps(rows, indent=2))
            return
        ref = a.compare[:10]
        this = (a.against or "this")[:10] + (" (compiled)" if a.compiled else "")
        ref_built = " (compiled)" if a.ref_compiled else ""
        print(f"ref: {a.compare}{ref_built}; this: {this}; {a.rounds} alternating rounds, "
              f"medians; CPU x: median ratio (min-max over the rounds)")
        print(f"{'scenario':24s} {'policy':12s} {ref + ' dec/s':>16s} {'this dec/s':>11s} "
              f"{'wall x':>7s} {ref + ' dec/cpu-s':>20s} {'this dec/cpu-s':>15s} "
              f"{'CPU x':>6s} {'(min-max)':>11s}")
        for r in rows:
            if r.get("kind") == "callgrind":
                continue
            print(f"{r['env']:24s} {r['policy']:12s} {r['ref_decisions_per_s']:16.0f} "
                  f"{r['this_decisions_per_s']:11.0f} {r['speedup']:6.2f}x "
                  f"{r['ref_decisions_per_cpu_s']:20.0f} {r['this_decisions_per_cpu_s']:15.0f} "
                  f"{r['cpu_speedup']:5.2f}x ({r['cpu_speedup_min']:.2f}-"
                  f"{r['cpu_speedup_max']:.2f})")
        grind = [r for r in rows if r.get("kind") == "callgrind"]
        if grind:
            print(f"\ninstructions per decision (callgrind)\n{'scenario':24s} {'policy':8s} "
                  f"{'decisions':>9s} {ref + ' Ir/dec':>17s} {'this Ir/dec':>12s} {'x':>6s}")
            for r in grind:
                if "note" in r:
                    print(f"{r['env']:24s} {r['policy']:8s} {r['note']}")
                    continue
                print(f"{r['env']:24s} {r['policy']:8s} {r['decisions']:9d} "
                      f"{r['ref_instructions_per_decision']:17,.0f} "
                      f"{r['this_instructions_per_decision']:12,.0f} {r['ratio']:5.2f}x")
        return
    if a.baselines:
        rows = bench_baselines(list(range(5 if a.quick else 10)))
        if a.json:
            print(json.dumps(rows, indent=2))
            return
        print(f"{'scenario':24s} {'policy':17s} {'s/episode':>9s} {'max s':>7s} {'x EDF':>6s}")
        for r in rows:
            print(f"{r['env']:24s} {r['policy']:17s} {r['s_per_episode']:9.2f} {r['max_s']:7.2f} "
                  f"{r['vs_edf']:6.1f}")
        return
    if a.profile:
        import cProfile
        import pstats
        call = ("_bench('mrsched/Hadoop-v0', 'random', 5, 0, {})" if a.profile == "hadoop"
                else "_bench('mrsched/ThesisScale-v0', 'fifo-env', 1, 0, {})")
        cProfile.runctx(call, globals(), locals(), "/tmp/mrsched.prof")
        pstats.Stats("/tmp/mrsched.prof").sort_stats("tottime").print_stats(25)
        return
    n = 5 if a.quick else 20
    runs = [
        ("mrsched/Hadoop-v0", "random", n, 0, {}),
        ("mrsched/Hadoop-v0", "fifo-env", n, 0, {}),
        ("mrsched/ThesisScale-v0", "fifo-sim", 1, 0, {}),
        ("mrsched/ThesisScale-v0", "fifo-env", 1, 0, {}),
    ]
    if a.every_id:
        from mrsched_gym.config.env_ids import ENV_IDS
        runs = [(env_id, "random", 1 if env_id == "mrsched/ThesisScale-v0" else 2, 0, {})
                for env_id in ENV_IDS]
    train_steps = 4096 * (4 if a.quick else 12)
    if a.agents:
        runs += [("mrsched/Hadoop-v0", "agent", max(n // 4, 2), 0, {}),
                 ("mrsched/Hadoop-v0", "agent-numpy", max(n // 4, 2), 0, {}),
                 ("mrsched/Hadoop-v0", "train", train_steps, 0, {}),
                 ("mrsched/Hadoop-v0", "train-fast", train_steps, 0, {})]
    results = [run_isolated(*r) for r in runs]
    inference = run_inference(3 if a.quick else 5) if a.agents else []
    if a.json:
        print(json.dumps({"rows": results, "inference": inference} if a.agents else results,
                         indent=2))
        return
    print(f"{'scenario':24s} {'policy':11s} {'decisions':>9s} {'dec/s':>8s} {'dec/cpu-s':>9s} "
          f"{'tasks/s':>8s} {'run s/ep':>8s} {'reset s':>8s} {'peak MB':>8s}")
    for r in results:
        print(f"{r['env']:24s} {r['policy']:11s} {r['decisions']:9d} {r['decisions_per_s']:8.0f} "
              f"{r['decisions_per_cpu_s']:9.0f} {r['tasks_per_s']:8.0f} "
              f"{r['run_s_per_episode']:8.2f} {r['reset_s']:8.3f} {r['peak_rss_mb']:8.0f}")
    if a.agents:
        print("\ntrain / train-fast: decisions = env steps; dec/cpu-s = env steps per second per "
              "core (one thread, one process); the env's share of the training CPU time "
              "(MRSchedEnv.step and reset): " + ", ".join(
                  f"{r['policy']} {r['env_cpu_share']:.0%}" for r in results
                  if "env_cpu_share" in r))
        print(f"\ninference alone (mrsched/Hadoop-v0, recorded decisions, torch and numpy "
              f"alternating, best of {inference[0]['rounds']} rounds; "
              f"{inference[0]['disagreements']} disagreements)")
        print(f"{'policy':14s} {'decisions':>9s} {'us/decision':>11s} {'dec/s':>8s} "
              f"{'dec/cpu-s':>9s} {'x torch':>7s}")
        for r in inference:
            print(f"{r['policy']:14s} {r['decisions']:9d} {r['us_per_decision']:11.1f} "
                  f"{r['decisions_per_s']:8.0f} {r['decisions_per_cpu_s']:9.0f} "
                  f"{r['vs_torch']:7.2f}")


if __name__ == "__main__":
    main()
