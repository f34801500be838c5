"""The scenario-file field reference, generated from the JSON Schema of scenario files.

Everything this page says comes from the schema the package ships
(``mrsched_gym/data/scenario.schema.json``, generated from the config's sections by
:mod:`mrsched_gym.config.schema`; a test keeps the two equal): a field's type, choices and
default, its meaning (its class's ``Attributes:`` docstring) and the checks its section makes
beyond the type (``x-checks``, as the code writes them).
"""

from __future__ import annotations

import json
import re
from typing import Any

from mrsched_gym import config
from mrsched_gym.config.schema import shipped_schema_text

#: The classes in the order a scenario file nests them: (YAML path, class).
SECTIONS = (
    ("(top level)", config.Scenario),
    ("cluster", config.ClusterConfig),
    ("cluster.nodes[]", config.NodeGroup),
    ("interference", config.InterferenceConfig),
    ("availability", config.AvailabilityConfig),
    ("workload", config.WorkloadConfig),
    ("workload.jobs[]", config.JobSpec),
    ("decisions", config.DecisionConfig),
    ("decisions.preemption", config.PreemptionConfig),
    ("decisions.speculation", config.SpeculationConfig),
    ("reward", config.RewardConfig),
)

_JSON_TYPES = {"integer": "int", "number": "float", "string": "str", "boolean": "bool",
               "null": "None"}


def type_name(prop: dict[str, Any]) -> str:
    """A field's type as the reference writes it (``float``, ``tuple[JobSpec, ...]``, ...)."""
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in prop:
        return " | ".join(type_name(p) for p in prop["anyOf"])
    if "enum" in prop:
        return "Literal[" + ", ".join(repr(v) for v in prop["enum"]) + "]"
    kind = prop.get("type")
    if kind == "array":
        if "prefixItems" in prop:
            return "tuple[" + ", ".join(type_name(p) for p in prop["prefixItems"]) + "]"
        return f"tuple[{type_name(prop.get('items', {}))}, ...]"
    if kind == "object":
        return f"Mapping[str, {type_name(prop.get('additionalProperties', {}))}]"
    return _JSON_TYPES.get(kind, str(kind))


def _default(prop: dict[str, Any], required: bool) -> str:
    if required:
        return "required"
    value = prop.get("default")
    if "$ref" in prop:
        return "(section defaults)"
    items = prop.get("items", {})
    if isinstance(value, list) and value and "$ref" in items:
        return f"{len(value)} item(s), see below"
    if prop.get("type") == "array" and isinstance(value, list):
        value = tuple(value)
    return "`" + repr(value).replace("|", "\\|") + "`"


def _cell(text: str) -> str:
    text = re.sub(r":\w+:`~?([^`]*)`", r"`\1`", text)   # Sphinx roles read as code
    return text.replace("|", "\\|").replace("\n", " ")


def fields_table(section: dict[str, Any]) -> list[str]:
    """Markdown table rows (header included) of one section of the schema."""
    rows = ["| field | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    required = set(section.get("required", []))
    for name, prop in section["properties"].items():
        allowed = "; ".join(f"`{c}`" for c in prop.get("x-checks", []))
        if "enum" in prop or "enum" in prop.get("items", {}):
            allowed = allowed or "one of the type's values"
        rows.append(f"| `{name}` | `{_cell(type_name(prop))}` | "
                    f"{_default(prop, name in required)} | {_cell(allowed) or '-'} | "
                    f"{_cell(prop.get('description', ''))} |")
    return rows


def page() -> str:
    """The whole reference page (Markdown)."""
    schema = json.loads(shipped_schema_text())
    lines = ["# Scenario file reference", "",
             "A scenario file is YAML whose keys are the fields below; a missing key takes its "
             "default, an unknown key is an error naming the file, the line and the dotted "
             "path. `mrsched-gym show-scenario NAME` prints a bundled scenario with every "
             "default filled in; `gymnasium.make(ID, workload__load=0.9)` overrides one field "
             "by path.", "",
             "Editors validate and complete scenario files with the JSON Schema the package "
             "ships, `mrsched_gym/data/scenario.schema.json` (for example with the YAML "
             "language server: `# yaml-language-server: $schema=<path to that file>` as the "
             "first line). This page is generated from that schema when the site is built.", "",
             "*Allowed* lists the checks each field gets beyond its type, as the code writes "
             "them (every float must also be finite; a `Literal` field takes only its values); "
             "the simple bounds among them are in the schema too.", ""]
    for path, cls in SECTIONS:
        section = schema if cls is config.Scenario else schema["$defs"][cls.__name__]
        lines += [f"## `{path}`", "", f"{section['description']} (`{cls.__name__}`)", ""]
        lines += fields_table(section) + [""]
    return "\n".join(lines)
