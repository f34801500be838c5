"""Issue 63: the harness resolves trained agents through a registry the agents package fills
(an entry point), as Gymnasium resolves env ids; a third-party package registers its own kind
the same way, and the harness names no agent module."""

from __future__ import annotations

import importlib.metadata

import pytest

from mrsched_gym.evaluate import agent_kinds as registry
from mrsched_gym.evaluate import evaluate, make_policy, parse_policy, policy_fingerprint
from mrsched_gym.evaluate.policy_specs import PolicySpec

SHORT = {"workload.duration_s": 300.0}


def toy_kind() -> registry.AgentKind:
    """``toy:NAME``: a baseline by another name, as a third-party package would ship a kind."""
    def parse(spec: str) -> PolicySpec:
        return PolicySpec(label=spec, kind="toy", target=spec.partition(":")[2])

    def make(spec: PolicySpec):
        from mrsched_gym.baselines import make_baseline
        return make_baseline(spec.target)

    return registry.AgentKind("toy", lambda s: s.startswith("toy:"), parse, make,
                              lambda spec: f"toy-{spec.target}")


@pytest.fixture
def clean_registry(monkeypatch):
    """The registry as a fresh process has it (its entry points not loaded yet)."""
    monkeypatch.setattr(registry, "KINDS", {})
    monkeypatch.setattr(registry, "LOADED", [])


def test_the_agents_package_registers_its_kinds_by_entry_point(clean_registry):
    kinds = registry.agent_kinds()
    assert {"agent", "rllib"} <= set(kinds)
    spec = parse_policy("agent:hadoop-v0")
    assert spec.kind == "agent" and type(make_policy(spec)).__name__ == "NumpySetPolicy"


def test_a_third_party_kind_registered_by_a_call_ranks_beside_the_baselines(clean_registry):
    registry.register_agent_kind(toy_kind())
    records = evaluate(["toy:edf", "edf"], ["mrsched/Hadoop-v0"], [0], workers=1,
                       progress=False, env_kwargs=SHORT)
    by = {r["policy"]: r for r in records}
    assert by["toy:edf"]["deadline_penalty_h"] == by["edf"]["deadline_penalty_h"]
    assert policy_fingerprint(parse_policy("toy:edf")) == "toy-edf"


def test_a_third_party_kind_registered_by_entry_point(clean_registry, monkeypatch):
    class Point:
        name = "toy"

        def load(self):
            return lambda: registry.register_agent_kind(toy_kind())

    real = importlib.metadata.entry_points

    def entry_points(group=None, **kw):
        found = list(real(group=group, **kw))
        return found + [Point()] if group == registry.ENTRY_POINT_GROUP else found

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    assert parse_policy("toy:fifo").kind == "toy"
    assert "agent" in registry.agent_kinds()
    records = evaluate(["toy:fifo"], ["mrsched/Hadoop-v0"], [0], workers=2, progress=False,
                       env_kwargs=SHORT)
    assert [r["policy"] for r in records] == ["toy:fifo"]


def test_the_harness_own_kinds_cannot_be_replaced():
    kind = toy_kind()
    for name in registry.OWN_KINDS:
        with pytest.raises(ValueError, match="cannot be replaced"):
            registry.register_agent_kind(registry.AgentKind(
                name, kind.claims, kind.parse, kind.make, kind.fingerprint))


def test_the_harness_names_no_agent_module():
    """No module of mrsched_gym.evaluate imports mrsched_gym.agents, in any form."""
    from test_layers import IMPORTS
    found = sorted(f"{m}: {i.module}" for m, imps in IMPORTS.items()
                   if m.startswith("mrsched_gym.evaluate") for i in imps
                   if i.module == "mrsched_gym.agents"
                   or i.module.startswith("mrsched_gym.agents."))
    assert found == []
