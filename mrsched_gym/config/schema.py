"""The JSON Schema of scenario files, generated from the sections, and the copy the package ships.

pydantic gives each field's type, choices, default and nesting, and refuses unknown keys
(``additionalProperties: false``); to that, this module adds what a reader needs and pydantic
cannot see: each field's meaning (``description``, from its class's ``Attributes:`` docstring)
and the checks its section's ``__post_init__`` makes beyond the type (``x-checks``, as the code
writes them; the plain bounds among them also as ``minimum``/``maximum``, so editors flag them).
The checks across fields and the episode-size limits are only in the code.

The shipped copy is ``mrsched_gym/data/scenario.schema.json`` (:data:`SCHEMA_FILE`): point an
editor's YAML support at it (``# yaml-language-server: $schema=...`` at the top of a file). Write
it again after changing a section with ``python -m mrsched_gym.config.schema``; a test checks
that the shipped copy is the generated one. The docs' scenario-file reference is built from it.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import re
import sys
import textwrap
import warnings
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic.json_schema import PydanticJsonSchemaWarning

from mrsched_gym.config.build import to_dict
from mrsched_gym.config.scenario import Scenario

#: The shipped schema, as a package resource path.
SCHEMA_FILE = "scenario.schema.json"
SCHEMA_ID = "https://mrsched-gym.github.io/schema/scenario.schema.json"

_BOUND_KEYS = {">=": "minimum", ">": "exclusiveMinimum", "<=": "maximum", "<": "exclusiveMaximum"}


def attribute_docs(cls: type) -> dict[str, str]:
    """``Attributes:`` of a Google-style class docstring: name -> its description (one line)."""
    doc = inspect.getdoc(cls) or ""
    out: dict[str, str] = {}
    section = re.split(r"^Attributes:\s*$", doc, flags=re.M)
    if len(section) < 2:
        return out
    name = None
    for line in section[1].splitlines():
        if line and not line.startswith(" "):
            break
        m = re.match(r"^    (\w+)(?: \([^)]*\))?: (.*)$", line)
        if m:
            name = m.group(1)
            out[name] = m.group(2).strip()
        elif name and line.strip():
            out[name] += " " + line.strip()
    return out


def _constant(node: ast.expr, names: dict[str, Any]) -> float | None:
    """The number ``node`` stands for (a literal or a module constant), else ``None``."""
    try:
        value = eval(compile(ast.Expression(node), "<bound>", "eval"),  # noqa: S307
                     {"__builtins__": {}}, names) if all(
            isinstance(n, (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.operator,
                           ast.unaryop, ast.Load)) for n in ast.walk(node)) else None
    except (NameError, TypeError):
        return None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None


def field_checks(cls: type) -> dict[str, tuple[list[str], dict[str, float]]]:
    """Field -> (the conditions its class's ``__post_init__`` checks, as written there; the
    plain bounds among them as JSON Schema keywords)."""
    out: dict[str, tuple[list[str], dict[str, float]]] = {}
    post = cls.__dict__.get("__post_init__")
    if post is None:
        return out
    names = vars(sys.modules[cls.__module__])
    tree = ast.parse(textwrap.dedent(inspect.getsource(post)))
    fields = {f.name for f in dataclasses.fields(cls)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        args = node.args
        if node.func.id == "in_range" and len(args) >= 4 and isinstance(args[3], ast.Constant):
            lo_open = any(k.arg == "lo_open" for k in node.keywords)
            texts, bounds = out.setdefault(str(args[3].value), ([], {}))
            texts.append(f"{'(' if lo_open else '['}{ast.unparse(args[1])}, "
                         f"{ast.unparse(args[2])}]")
            lo, hi = _constant(args[1], names), _constant(args[2], names)
            if lo is not None:
                bounds["exclusiveMinimum" if lo_open else "minimum"] = lo
            if hi is not None:
                bounds["maximum"] = hi
        elif node.func.id == "lower_bound" and len(args) >= 3 and isinstance(
                args[2], ast.Constant) and args[2].value in fields:
            lo_open = any(k.arg == "lo_open" and isinstance(k.value, ast.Constant)
                          and k.value.value is True for k in node.keywords)
            sign = ">" if lo_open else ">="
            texts, bounds = out.setdefault(str(args[2].value), ([], {}))
            texts.append(f"{ast.unparse(args[0]).replace('self.', '')} {sign} "
                         f"{ast.unparse(args[1])}")
            lo = _constant(args[1], names)
            if ast.unparse(args[0]) == f"self.{args[2].value}" and lo is not None:
                bounds[_BOUND_KEYS[sign]] = lo
        elif node.func.id == "exact_keys" and len(args) >= 3 and isinstance(
                args[2], ast.Constant) and args[2].value in fields:
            keys = args[1]
            value = names.get(keys.id) if isinstance(keys, ast.Name) else None
            listed = (", ".join(repr(k) for k in value) if isinstance(value, tuple)
                      else ast.unparse(keys))
            out.setdefault(str(args[2].value), ([], {}))[0].append(
                f"set({ast.unparse(args[0]).replace('self.', '')}) == {{{listed}}}")
        elif node.func.id == "check" and len(args) >= 2 and isinstance(args[1], ast.Constant):
            fld = args[1].value
            if not (isinstance(fld, str) and fld in fields):
                continue
            texts, bounds = out.setdefault(fld, ([], {}))
            texts.append(ast.unparse(args[0]).replace("self.", ""))
            cond = args[0]
            if isinstance(cond, ast.Compare) and len(cond.ops) == 1 and ast.unparse(
                    cond.left) == f"self.{fld}":
                op = {ast.GtE: ">=", ast.Gt: ">", ast.LtE: "<=", ast.Lt: "<"}.get(
                    type(cond.ops[0]))
                value = _constant(cond.comparators[0], names)
                if op is not None and value is not None:
                    bounds[_BOUND_KEYS[op]] = value
    return out


def _section_classes(tp: Any, seen: dict[str, type]) -> dict[str, type]:
    """Every section class reachable from ``tp``, by name (as pydantic names its ``$defs``)."""
    if not dataclasses.is_dataclass(tp) or not isinstance(tp, type) or tp.__name__ in seen:
        return seen
    seen[tp.__name__] = tp
    for f in dataclasses.fields(tp):
        for inner in re.findall(r"\b[A-Z]\w+\b", str(f.type)):
            candidate = vars(sys.modules[tp.__module__]).get(inner)
            if candidate is not None:
                _section_classes(candidate, seen)
    return seen


def _describe(schema: dict[str, Any], cls: type) -> None:
    """Add descriptions, defaults pydantic leaves out and the checks to one section's schema."""
    schema["description"] = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
    docs, checks = attribute_docs(cls), field_checks(cls)
    for f in dataclasses.fields(cls):
        prop = schema["properties"][f.name]
        prop.pop("title", None)
        if f.name in docs:
            prop["description"] = docs[f.name]
        if "default" not in prop and f.default_factory is not dataclasses.MISSING:
            prop["default"] = to_dict(f.default_factory())
        elif "default" not in prop and f.default is not dataclasses.MISSING:
            prop["default"] = to_dict(f.default)      # a section (pydantic leaves it out)
        texts, bounds = checks.get(f.name, ([], {}))
        if texts:
            prop["x-checks"] = texts
        if bounds and prop.get("type") in ("number", "integer"):
            prop.update({k: int(v) if prop["type"] == "integer" and v.is_integer() else v
                         for k, v in bounds.items()})


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a scenario file."""
    with warnings.catch_warnings():     # the defaults pydantic cannot write: _describe does
        warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
        schema = TypeAdapter(Scenario).json_schema()
    classes = _section_classes(Scenario, {})
    for name, sub in schema["$defs"].items():
        sub.pop("title", None)
        _describe(sub, classes[name])
    schema.pop("title", None)
    _describe(schema, Scenario)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "mrsched_gym scenario file", **schema}


def schema_text() -> str:
    """The schema as the shipped file holds it (fields in their declared order, two-space
    indent, final newline)."""
    return json.dumps(scenario_schema(), indent=2) + "\n"


def shipped_schema_text() -> str:
    """The schema file the package ships."""
    return resources.files("mrsched_gym.data").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def main() -> None:
    """Write the generated schema over the shipped copy."""
    path = Path(str(resources.files("mrsched_gym.data").joinpath(SCHEMA_FILE)))
    path.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
