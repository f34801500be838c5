"""The JSON Schema of scenario files: shipped as generated, valid, and agreeing with the loader."""

import json

import pytest
import yaml

from mrsched_gym.config import (
    ConfigError,
    NodeGroup,
    Scenario,
    bundled_scenarios,
    config_source,
    load_scenario,
)
from mrsched_gym.config.schema import (
    attribute_docs,
    field_checks,
    scenario_schema,
    schema_text,
    shipped_schema_text,
)

jsonschema = pytest.importorskip("jsonschema")


def _validator():
    schema = json.loads(shipped_schema_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_shipped_schema_is_the_generated_one():
    assert shipped_schema_text() == schema_text(), (
        "mrsched_gym/data/scenario.schema.json is stale: python -m mrsched_gym.config.schema")


def test_every_bundled_scenario_fits_the_schema():
    v = _validator()
    for name in bundled_scenarios():
        _, text = config_source(name, "scenarios")
        errors = [e.message for e in v.iter_errors(yaml.safe_load(text))]
        assert not errors, (name, errors)


@pytest.mark.parametrize("text,schema_says,loader_says", [
    ("workload: {lod: 0.5}\n", "'lod' was unexpected", "workload.lod: unknown key"),
    ("workload: {kind: synth}\n", "'synth' is not one of", "workload.kind: must be one of"),
    ("cluster: {nodes: [{count: 0}]}\n", "less than the minimum of 1",
     "cluster.nodes[0].count: must be >= 1"),
    ("workload: {load: 9}\n", "greater than the maximum of 5", "workload.load: must be in"),
    ("decisions: {admission: 'yes'}\n", "is not of type 'boolean'",
     "decisions.admission: expected true/false"),
    ("cluster: {racks: 2.5}\n", "is not of type 'integer'", "cluster.racks: expected an integer"),
])
def test_the_schema_and_the_loader_refuse_the_same_files(tmp_path, text, schema_says,
                                                        loader_says):
    messages = [e.message for e in _validator().iter_errors(yaml.safe_load(text))]
    assert any(schema_says in m for m in messages), messages
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_scenario(p)
    assert loader_says in str(e.value)


def test_every_field_is_described_with_its_default():
    schema = scenario_schema()
    sections = {"Scenario": schema, **schema["$defs"]}
    assert set(sections) >= {"Scenario", "ClusterConfig", "NodeGroup", "WorkloadConfig",
                             "JobSpec", "RewardConfig"}
    for name, sub in sections.items():
        assert sub["description"], name
        assert sub["additionalProperties"] is False, name
        for field, prop in sub["properties"].items():
            assert prop.get("description"), (name, field)
            assert "default" in prop or field in sub.get("required", []), (name, field)
    assert schema["properties"]["workload"]["default"]["type_mix"] == {"wordcount": 1.0,
                                                                       "sort": 1.0}


def test_checks_are_read_from_the_code():
    docs = attribute_docs(NodeGroup)
    assert docs["count"] == "Number of nodes in the group."
    texts, bounds = field_checks(NodeGroup)["count"]
    assert texts == ["count >= 1", "count <= MAX_NODES"]
    assert bounds == {"minimum": 1.0, "maximum": 10_000.0}
    texts, bounds = field_checks(Scenario)["time_limit_s"]
    assert texts[0] == "0 < time_limit_s <= MAX_TIME_LIMIT_S" and bounds == {}
