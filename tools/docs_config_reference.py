"""The scenario-file field reference, generated from the config classes of mrsched_gym.config.

Everything this page says comes from the code: a field's type and default from the dataclass,
its meaning from the class docstring's ``Attributes:`` section, its range from the checks in the
class's ``__post_init__`` (shown as written there). This is the only module that knows how the
config classes are declared: if they move to another library, only this file changes.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
import typing

from mrsched_gym import config

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


def _type_name(tp) -> str:
    text = str(tp) if not isinstance(tp, type) else tp.__name__
    text = re.sub(r"\btyping\.|collections\.abc\.|mrsched_gym\.config\.", "", text)
    return text.replace("NoneType", "None")


def _attributes(cls) -> dict[str, str]:
    """``Attributes:`` of a Google-style class docstring: name -> one-line description."""
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


def _ranges(cls) -> dict[str, list[str]]:
    """Field -> the conditions its ``__post_init__`` checks, as written there."""
    out: dict[str, list[str]] = {}
    post = getattr(cls, "__post_init__", None)
    if post is None:
        return out
    tree = ast.parse(textwrap.dedent(inspect.getsource(post)))
    names = {f.name for f in dataclasses.fields(cls)}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        args = node.args
        if node.func.id == "_in_range" and len(args) >= 4 and isinstance(args[3], ast.Constant):
            lo_open = any(k.arg == "lo_open" for k in node.keywords)
            lo, hi = ast.unparse(args[1]), ast.unparse(args[2])
            out.setdefault(args[3].value, []).append(f"{'(' if lo_open else '['}{lo}, {hi}]")
        elif node.func.id == "_check" and len(args) >= 2 and isinstance(args[1], ast.Constant):
            fld = args[1].value
            if isinstance(fld, str) and fld in names:
                cond = ast.unparse(args[0]).replace("self.", "")
                out.setdefault(fld, []).append(cond)
    return out


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return "required"
    if dataclasses.is_dataclass(value):
        return "(section defaults)"
    if isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
        return f"{len(value)} item(s), see below"
    if isinstance(value, typing.Mapping):
        value = dict(value)
    return "`" + repr(value).replace("|", "\\|") + "`"


def _cell(text: str) -> str:
    text = re.sub(r":\w+:`~?([^`]*)`", r"`\1`", text)   # Sphinx roles read as code
    return text.replace("|", "\\|").replace("\n", " ")


def fields_table(cls) -> list[str]:
    """Markdown table rows (header included) of one config class's fields."""
    hints = typing.get_type_hints(cls)
    docs, ranges = _attributes(cls), _ranges(cls)
    rows = ["| field | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        allowed = "; ".join(f"`{r}`" for r in ranges.get(f.name, []))
        if typing.get_origin(tp) is typing.Literal:
            allowed = allowed or "one of the type's values"
        rows.append(f"| `{f.name}` | `{_cell(_type_name(tp))}` | {_default(f)} | "
                    f"{_cell(allowed) or '-'} | {_cell(docs.get(f.name, ''))} |")
    return rows


def page() -> str:
    """The whole reference page (Markdown)."""
    lines = ["# Scenario file reference", "",
             "A scenario file is YAML whose keys are the fields below; a missing key takes its "
             "default, an unknown key is an error naming the file and the dotted path. "
             "`mrsched-gym show-scenario NAME` prints a bundled scenario with every default "
             "filled in; `gymnasium.make(ID, workload__load=0.9)` overrides one field by path.",
             "",
             "*Allowed* lists the checks each field gets beyond its type, as the code writes "
             "them (every float must also be finite; a `Literal` field takes only its values). "
             "This page is generated from `mrsched_gym.config` when the site is built.", ""]
    for path, cls in SECTIONS:
        summary = (inspect.getdoc(cls) or "").split("\n\n")[0].replace("\n", " ")
        lines += [f"## `{path}`", "", f"{summary} (`{cls.__name__}`)", ""]
        lines += fields_table(cls) + [""]
    return "\n".join(lines)
