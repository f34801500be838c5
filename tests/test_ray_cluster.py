"""Ray across two real nodes: a head and a second node started with ``ray start`` on this
machine (each its own raylet, object store and workers, one CPU each, like two small machines),
an evaluation sweep whose episodes run on both nodes and must give the local run's records, and
one RLlib training iteration whose EnvRunner runs on the second node. Both nodes are stopped
after the test, failed or not, by the ids of the processes this test started (``ray stop``
would stop every Ray on the machine).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("torch")

from mrsched_gym.ray_backend import evaluate_ray, init_ray, rllib_ppo_config  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray"),
              pytest.mark.skipif(os.name == "nt", reason="process groups: POSIX")]
SHORT = {"workload.duration_s": 900}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_command(temp_dir: str, resources: dict, head_port: int, head: bool) -> list[str]:
    """``ray start`` for one node, in the foreground (``--block``), every port its own."""
    cmd = [str(Path(sys.executable).with_name("ray")), "start", "--block", "--num-cpus=1",
           f"--temp-dir={temp_dir}", "--disable-usage-stats",
           f"--resources={json.dumps(resources)}",
           f"--node-manager-port={free_port()}", f"--object-manager-port={free_port()}",
           f"--dashboard-agent-listen-port={free_port()}",
           f"--dashboard-agent-grpc-port={free_port()}",
           f"--runtime-env-agent-port={free_port()}", f"--metrics-export-port={free_port()}"]
    if head:
        return [*cmd, "--head", f"--port={head_port}", "--include-dashboard=false",
                f"--ray-client-server-port={free_port()}"]
    return [*cmd, f"--address=127.0.0.1:{head_port}"]


def processes_under(temp_dir: str) -> list[int]:
    """The ids of the processes whose command line names ``temp_dir`` (this cluster's)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if temp_dir in (proc / "cmdline").read_bytes().decode(errors="replace"):
                    pids.append(int(proc.name))
            except OSError:
                continue
    return pids


@pytest.fixture
def two_nodes():
    """A two-node cluster (resources ``head_node`` and ``second_node``); yields its address."""
    if ray.is_initialized():
        ray.shutdown()
    temp_dir = tempfile.mkdtemp(prefix="mrsray")      # short: Ray's socket paths have a limit
    port = free_port()
    nodes: list[subprocess.Popen] = []
    try:
        for head, resources in ((True, {"head_node": 1}), (False, {"second_node": 1})):
            log = open(Path(temp_dir) / f"{'head' if head else 'second'}.log", "w")
            nodes.append(subprocess.Popen(node_command(temp_dir, resources, port, head),
                                          stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True))
            if head:
                time.sleep(5)
        init_ray(address=f"127.0.0.1:{port}",
                 runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
        deadline = time.monotonic() + 60
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:
            assert time.monotonic() < deadline, "the second node did not join in 60 s"
            time.sleep(1)
        yield f"127.0.0.1:{port}"
    finally:
        ray.shutdown()
        for node in nodes:                              # SIGTERM: `ray start --block` drains
            try:
                os.killpg(node.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for node in nodes:
            try:
                node.wait(timeout=40)
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
        for pid in processes_under(temp_dir):           # anything of this cluster left over
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(temp_dir, ignore_errors=True)


def same(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                      and math.isnan(b))


def test_a_sweep_and_a_training_run_across_two_nodes(two_nodes, tmp_path, monkeypatch):
    nodes = {n["NodeID"]: n["Resources"] for n in ray.nodes() if n["Alive"]}
    assert len(nodes) == 2 and all(r["CPU"] == 1 for r in nodes.values())
    second = next(i for i, r in nodes.items() if "second_node" in r)

    # every node imports the package (what its workers run), pinned there by its resource
    @ray.remote(num_cpus=0)
    def where():
        import mrsched_gym
        return ray.get_runtime_context().get_node_id(), mrsched_gym.__version__

    import mrsched_gym
    pinned = ray.get([where.options(resources={r: 0.01}).remote()
                      for r in ("head_node", "second_node")])
    assert {n for n, _ in pinned} == set(nodes)
    assert {v for _, v in pinned} == {mrsched_gym.__version__}

    # the sweep: one Ray task per episode, each noting the node it ran on (records untouched)
    import mrsched_gym.evaluate as harness
    run_task, seen = harness.run_task, str(tmp_path / "seen")
    os.makedirs(seen)

    def run_task_noting_the_node(task, per_job=False):
        Path(seen, f"{ray.get_runtime_context().get_node_id()}-{os.getpid()}").touch()
        return run_task(task, per_job)

    monkeypatch.setattr(harness, "run_task", run_task_noting_the_node)
    policies, seeds = ["fifo", "edf", "random"], [0, 1]
    remote = evaluate_ray(policies, ["mrsched/Hadoop-v0"], seeds, env_kwargs=SHORT,
                          address=two_nodes, progress=False)
    monkeypatch.undo()
    local = harness.evaluate(policies, ["mrsched/Hadoop-v0"], seeds, workers=1,
                             progress=False, env_kwargs=SHORT)
    assert len(remote) == len(local) == 6
    for r, lo in zip(remote, local, strict=True):
        assert r.keys() == lo.keys()
        assert all(same(r[k], lo[k]) for k in lo if k != "wall_s"), (r["policy"], r["seed"])
    assert {name.split("-")[0] for name in os.listdir(seen)} == set(nodes)

    # RLlib: the learner in this driver, the EnvRunner on the second node
    cfg = rllib_ppo_config(env_overrides=SHORT, num_env_runners=1, train_batch_size=256,
                           minibatch_size=64, num_epochs=1, set_hidden=16, vf_hiddens=(16,))
    cfg = cfg.env_runners(custom_resources_per_env_runner={"second_node": 0.01})
    algo = cfg.build_algo()
    try:
        runners_at = algo.env_runner_group.foreach_env_runner(
            lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False)
        result = algo.train()
    finally:
        algo.stop()
    assert runners_at == [second]
    assert result["env_runners"]["num_env_steps_sampled_lifetime"] >= 256
    learner = result["learners"]["default_policy"]
    assert math.isfinite(float(learner["total_loss"])) and learner["num_module_steps_trained"] > 0
