"""Scenario files: every bundled one loads; malformed ones fail naming the file and field."""

import ast
import dataclasses
import pathlib

import gymnasium as gym
import pytest

from mrsched_gym.config import (
    ConfigError,
    bundled_scenarios,
    load_scenario,
    scenario_from_dict,
    to_dict,
    with_overrides,
)
from mrsched_gym.models.traces import TraceError, read_series


def test_every_bundled_scenario_loads_and_round_trips():
    names = bundled_scenarios()
    assert {"hadoop", "dedicated", "heterogeneous", "shared", "dynamic", "preemption"} <= set(names)
    for name in names:
        sc = load_scenario(name)
        assert scenario_from_dict(to_dict(sc)) == sc


def _write(tmp_path, text):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    return p


@pytest.mark.parametrize("text,needle", [
    ("workload:\n  lod: 0.5\n", "workload.lod: unknown key"),
    ("workload:\n  load: -1\n", "workload.load: must be in"),
    ("cluster:\n  nodes:\n    - {count: 0}\n", "cluster.nodes[0].count: must be >= 1"),
    ("cluster:\n  resource_mode: yarn\n", "cluster.resource_mode: must be"),
    ("workload:\n  type_mix: {wordcnt: 1}\n", "workload.type_mix.wordcnt"),
    ("interference:\n  policy: fair\n", "interference.policy"),
    ("decisions:\n  max_candidates: 0\n", "decisions.max_candidates"),
    ("reward:\n  weights: {latency: 1}\n", "reward.weights.latency"),
    ("time_limit_s: soon\n", "time_limit_s: expected a number"),
    ("decisions:\n  admission: 1\n", "decisions.admission: expected true/false"),
    ("workload:\n  kind: jobs\n", "workload.jobs: kind 'jobs' needs a job list"),
    ("workload:\n  kind: jobs\n  jobs:\n    - {type: sort, n_maps: 0}\n",
     "workload.jobs[0].n_maps"),
    ("workload:\n  deadline_scope: maps\n", "workload.deadline_scope: must be one of"),
    ("cluster:\n  hdfs_on: shared\n", "cluster.hdfs_on: must be one of"),
    ("cluster:\n  nodes:\n    - {reduce_slots: 65}\n",
     "cluster.nodes[0].reduce_slots: must be null or in [0, 64]"),
    ("cluster:\n  nodes:\n    - {reduce_slots: 0}\n",
     "cluster.nodes: every node group has reduce_slots 0 but workload.type_mix draws"),
])
def test_malformed_scenarios_name_file_and_field(tmp_path, text, needle):
    p = _write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_scenario(p)
    assert str(p) in str(e.value)
    assert needle in str(e.value)


def test_invalid_yaml_names_line(tmp_path):
    p = _write(tmp_path, "workload:\n  load: [1, 2\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: line \d+ invalid YAML"):
        load_scenario(p)


def test_missing_file_and_unknown_name():
    with pytest.raises(ConfigError, match="not found"):
        load_scenario("/nonexistent/x.yaml")
    with pytest.raises(ConfigError, match="no such scenario"):
        load_scenario("no_such_scenario")


def test_overrides_dotted_and_double_underscore():
    sc = load_scenario("hadoop")
    a = with_overrides(sc, {"workload.load": 0.5})
    b = with_overrides(sc, {"workload__load": 0.5})
    c = with_overrides(sc, {"workload": {"load": 0.5}})
    assert a == b == c and a.workload.load == 0.5 and a.workload.size_mean == sc.workload.size_mean
    with pytest.raises(ConfigError, match="unknown key"):
        with_overrides(sc, {"workload.lod": 0.5})
    with pytest.raises(ConfigError, match="workload.load"):
        gym.make("mrsched/Hadoop-v0", workload__load=-3)


def test_configs_are_frozen():
    sc = load_scenario("hadoop")
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.workload.load = 3.0          # type: ignore[misc]
    with pytest.raises(TypeError):
        sc.workload.type_mix["sort"] = 5.0   # type: ignore[index]


def test_default_slot_rule():
    """MROrchestrator footnote 1: min{C-1, (M-2)/2, D/50}."""
    sc = scenario_from_dict(
        {"cluster": {"nodes": [{"cpu_cores": 8, "mem_gb": 10, "disk_gb": 500}]}})
    assert sc.cluster.nodes[0].effective_map_slots == 4
    sc = scenario_from_dict(
        {"cluster": {"nodes": [{"cpu_cores": 4, "mem_gb": 32, "disk_gb": 500}]}})
    assert sc.cluster.nodes[0].effective_map_slots == 3


@pytest.mark.parametrize("text,needle", [
    ("time_s,value\n0,1\n0,2\n", ":3: time 0.0 is not after 0.0"),
    ("time_s,value\n0,1\n5,abc\n", ":3: not a number"),
    ("t,value\n0,1\n", ":1: header"),
    ("time_s,value\n0\n", ":2: expected 2 columns"),
])
def test_malformed_traces_name_file_and_line(tmp_path, text, needle):
    p = tmp_path / "trace.csv"
    p.write_text(text)
    with pytest.raises(TraceError) as e:
        read_series(p)
    assert str(p) in str(e.value) and needle in str(e.value)


def test_bad_trace_fails_at_construction(tmp_path):
    p = tmp_path / "trace.csv"
    p.write_text("time_s,value\n0,1\n0,1\n")
    with pytest.raises(TraceError):
        gym.make("mrsched/Dynamic-v0", availability__generator="trace", availability__trace=str(p))


def test_simulator_does_not_import_gymnasium():
    """STYLE principle 1: the simulation core imports only stdlib, numpy and project modules."""
    root = pathlib.Path(__file__).resolve().parents[1] / "mrsched_gym"
    core = list((root / "sim").glob("*.py")) + list((root / "models").glob("*.py")) + \
        list((root / "workloads").glob("*.py"))
    for f in core:
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for n in names:
                top = n.split(".")[0]
                assert top not in ("gymnasium", "gym", "torch", "stable_baselines3"), (f, n)
                assert n.split(".")[:2] != ["mrsched_gym", "env"], (f, n)


def test_nested_override_merges_sections_and_replaces_mappings():
    sc = load_scenario("hadoop")
    o = with_overrides(sc, {"decisions": {"preemption": {"enabled": True}},
                            "workload": {"type_mix": {"sort": 1.0}}})
    assert o.decisions.preemption.enabled
    assert o.decisions.preemption.primitives == sc.decisions.preemption.primitives
    assert dict(o.workload.type_mix) == {"sort": 1.0}


@pytest.mark.parametrize("text,where", [
    ("name: x\ncluster:\n  racks: 2\n  nodes:\n    - count: 4\n    - count: 0\n",
     "line 6: cluster.nodes[1].count: must be >= 1, got 0"),
    ("workload:\n  kind: jobs\n  jobs:\n    - {type: sort, n_maps: 4}\n    - type: sort\n"
     "      n_maps: 2.5\n", "line 6: workload.jobs[1].n_maps: expected an integer, got 2.5"),
    ("decisions:\n  max_candidates: 8\n  preemption: {enabled: true,\n"
     "    primitives: [kill, pause]}\n",
     "line 4: decisions.preemption.primitives: unknown value 'pause'"),
    ("time_limit_s: 100\n\nworkload:\n\n  lod: 0.5\n", "line 5: workload.lod: unknown key"),
    ("workload:\n  load: 0.5\n  type_mix: {sort: .inf}\n",
     "line 3: workload.type_mix.sort: must be a finite number"),
    # a missing value is reported at its section, a cross-section rule at the field it names
    ("interference: {step_s: 60}\nworkload:\n  kind: trace\n",
     "line 2: workload.trace: required when kind is 'trace'"),
    ("cluster:\n  nodes:\n    - {count: 2, reduce_slots: 0}\n",
     "line 2: cluster.nodes: every node group has reduce_slots 0"),
])
def test_a_bad_value_in_a_file_names_file_line_and_field(tmp_path, text, where):
    p = _write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_scenario(p)
    assert str(e.value).startswith(f"{p}: {where}"), str(e.value)


def test_bad_values_from_data_name_the_field_and_no_line():
    with pytest.raises(ConfigError) as e:
        with_overrides(load_scenario("hadoop"), {"cluster.nodes": [{"count": 2}, {"count": 0}]})
    assert str(e.value).startswith("overrides: cluster.nodes[1].count: must be >= 1")
    assert e.value.keys == ("cluster", "nodes", 1, "count")


def test_unknown_keys_get_the_closest_known_one():
    with pytest.raises(ConfigError, match=r"workload.lod: unknown key \(known: .*\); did you "
                                          r"mean 'load'\?"):
        scenario_from_dict({"workload": {"lod": 0.5}})


def test_configs_pickle_hash_and_replace_as_dataclasses():
    import pickle
    sc = load_scenario("hadoop")
    again = pickle.loads(pickle.dumps(sc))
    assert again == sc and hash(again) == hash(sc)
    job = scenario_from_dict({"workload": {"kind": "jobs", "jobs": [{"type": "sort"}]}}
                             ).workload.jobs[0]
    assert dataclasses.replace(job, n_maps=3).n_maps == 3
    with pytest.raises(ConfigError, match="n_maps: must be >= 1, got 0"):
        dataclasses.replace(job, n_maps=0)


def test_a_bad_value_in_a_reproduction_file_names_its_line(tmp_path):
    from mrsched_gym.reproduce import load_reproduction
    p = tmp_path / "rep.yaml"
    p.write_text("title: t\ncases:\n  - name: a\n    policies: [fifo]\nseeds: two\nbase: hadoop\n")
    with pytest.raises(ConfigError, match=r"rep.yaml: line 5: seeds: expected an integer, "
                                          r"got 'two'"):
        load_reproduction(str(p))


def test_any_mapping_is_data():
    from types import MappingProxyType

    from mrsched_gym.frozen import FrozenDict
    sc = scenario_from_dict(FrozenDict({
        "workload": MappingProxyType({"load": 0.5, "type_mix": FrozenDict({"sort": 1})}),
        "cluster": {"nodes": (FrozenDict({"count": 3}),)}}))
    assert sc.workload.load == 0.5 and dict(sc.workload.type_mix) == {"sort": 1.0}
    assert sc.cluster.n_nodes == 3


@pytest.mark.parametrize("line3, field", [("n_envs: abc", "n_envs"), ("n_envs: -3", "n_envs"),
                                          ("algo: ppo2", "algo")])
def test_a_bad_value_in_a_training_config_names_its_file_line_and_field(tmp_path, line3, field):
    """Type errors (the builder) and range errors (``TrainConfig.validate``) alike."""
    from mrsched_gym.agents.training.train_config import load_config
    path = tmp_path / "bad.yaml"
    path.write_text(f"env: mrsched/Hadoop-v0\ntotal_timesteps: 1000\n{line3}\n")
    with pytest.raises(ConfigError, match=rf"bad\.yaml: line 3: {field}: "):
        load_config(path)
