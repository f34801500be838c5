"""Config files: the one "path or bundled name" rule, reading UTF-8 text of a bounded size, and
YAML parsing that refuses duplicate keys, is bounded (:mod:`~mrsched_gym.config.bounded_yaml`)
and can tell the line of any value (:func:`line_of`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any, cast

import yaml

from mrsched_gym.config.bounded_yaml import BoundedLoader, YAMLBoundError
from mrsched_gym.config.env_ids import ENV_IDS, ENV_OVERRIDES
from mrsched_gym.config.errors import ConfigError, short
from mrsched_gym.errors import InputTypeError, did_you_mean, not_a_file
from mrsched_gym.frozen import FrozenDict

#: The largest config file read (bytes); the largest bundled one is about 17 kB.
MAX_CONFIG_BYTES = 1_000_000

#: The kinds of bundled config files: folder of ``configs/`` -> what its files are called.
CONFIG_KINDS: Mapping[str, str] = FrozenDict({
    "scenarios": "scenario", "agents": "training config", "reproductions": "reproduction"})


def bundled_names(kind: str) -> list[str]:
    """Names of the config files shipped in ``configs/<kind>`` (a key of :data:`CONFIG_KINDS`)."""
    root = resources.files("mrsched_gym.configs").joinpath(kind)
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".yaml"))


def config_source(path_or_name: str | os.PathLike[str], kind: str) -> tuple[str, str]:
    """The one "path or bundled name" rule of every config file (scenarios, training configs,
    reproductions): ``(source, text)``.

    A name ending in ``.yaml``/``.yml``, or naming an existing file, is read as a path; any other
    name is looked up in ``configs/<kind>``.

    Raises:
        ConfigError: A missing or unreadable file, or an unknown name (the message lists the
            bundled names).
        InputTypeError: ``path_or_name`` is neither a string nor a path.
    """
    what = CONFIG_KINDS[kind]
    if not isinstance(path_or_name, (str, os.PathLike)):
        raise InputTypeError(f"{what} must be a YAML path or a bundled {what} name, got "
                             f"{type(path_or_name).__name__} {short(path_or_name)}")
    bundled = ", ".join(bundled_names(kind))
    if not str(path_or_name).strip():
        raise ConfigError(f"{what} name is empty (bundled: {bundled})")
    p = Path(path_or_name)
    if p.suffix in (".yaml", ".yml") or p.exists():
        return str(p), read_text_file(p, what)
    name = str(path_or_name)
    res = resources.files("mrsched_gym.configs").joinpath(kind).joinpath(f"{name}.yaml")
    if not res.is_file():
        raise ConfigError(f"{name}: no such {what} file or bundled {what} (bundled: {bundled})"
                          + unknown_name_hint(kind, name))
    return f"configs/{kind}/{name}.yaml", res.read_text(encoding="utf-8")


def unknown_name_hint(kind: str, name: str) -> str:
    """For an unknown scenario name, the registered env ids (which name scenarios where a world
    is asked for: the CLI, the harness, gym.make) and the closest id or bundled name, as the end
    of the error's sentence; '' for other kinds. A registered id given where only a scenario
    file is read (``MRSchedEnv(scenario=...)``, ``load_scenario``) is told its scenario's name."""
    if kind != "scenarios":
        return ""
    if name in ENV_IDS:
        extra = ENV_OVERRIDES.get(name)
        return (f"; {name!r} is a registered env id (for gym.make and the command line): a "
                f"scenario file is named by its bundled name, here {ENV_IDS[name]!r}"
                + (f" with the overrides {dict(extra)}" if extra else ""))
    return (f"; registered ids: {', '.join(ENV_IDS)}"
            + did_you_mean(name, [*ENV_IDS, *bundled_names(kind)]))


def bundled_scenarios() -> list[str]:
    """Names of the scenario files shipped in ``configs/scenarios``."""
    return bundled_names("scenarios")


class UniqueKeyLoader(BoundedLoader):
    """PyYAML's safe loader, bounded (:class:`~mrsched_gym.config.bounded_yaml.BoundedLoader`),
    except that a key repeated in one mapping is an error.

    Plain ``yaml.safe_load`` keeps the last value silently, so ``load: 0.5`` followed by
    ``load: 0.9`` would quietly mean 0.9. Keys brought in by a ``<<`` merge may still be
    overridden (that is what merges are for).
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """Build a mapping; a repeated key raises a ``ConstructorError`` naming both lines."""
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue          # an unhashable key: the base class reports it
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first})",
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return cast(dict[Any, Any], super().construct_mapping(node, deep=deep))


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML text with :class:`UniqueKeyLoader`; errors name ``source`` and the line.

    Raises:
        ConfigError: Invalid YAML, a duplicate key, text over :data:`MAX_CONFIG_BYTES` or a
            document over the bounds of :mod:`~mrsched_gym.config.bounded_yaml` (checked before
            any alias is expanded).
    """
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: {len(text):,} characters, more than a config file may "
                          f"hold ({MAX_CONFIG_BYTES:,})")
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
    except YAMLBoundError as e:
        where = f" line {e.line}:" if e.line else ""
        raise ConfigError(f"{source}:{where} {e.message}") from None
    except RecursionError:
        raise ConfigError(f"{source}: YAML nested too deeply") from None
    except yaml.reader.ReaderError as e:       # a character YAML does not allow (NUL...)
        line = text.count("\n", 0, e.position) + 1
        raise ConfigError(f"{source}: line {line} invalid YAML: character #x{e.character:04x} "
                          f"is not allowed in a YAML file") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(e, "problem", e)).split())
        raise ConfigError(f"{source}:{where} invalid YAML: {problem}") from None


def read_text_file(path: Path, what: str) -> str:
    """The UTF-8 text of a config file (a leading byte-order mark is dropped).

    Raises:
        ConfigError: The file is missing, not a regular file, larger than
            :data:`MAX_CONFIG_BYTES`, unreadable or not UTF-8 text, naming it.
    """
    if not path.is_file():
        raise ConfigError(f"{path}: {not_a_file(path, f'{what} file')}")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} file: {e.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than a {what} file may be ({MAX_CONFIG_BYTES:,} "
                          "bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ConfigError(f"{path}: line {line}: not UTF-8 text (byte {data[e.start]:#04x} at "
                          f"offset {e.start}); a {what} file is YAML text") from None


def line_of(text: str, keys: tuple[str | int, ...]) -> int | None:
    """The line (1-based) of the value at ``keys`` in the YAML ``text``, or of the deepest of its
    sections that is in the text (a missing key is reported at its section); ``None`` when the
    text does not parse or ``keys`` is empty."""
    if not keys:
        return None
    try:
        node = yaml.compose(text, Loader=BoundedLoader)
    except (yaml.YAMLError, RecursionError):
        return None
    line = None
    for k in keys:
        if isinstance(node, yaml.MappingNode):
            found = [(kn, vn) for kn, vn in node.value
                     if isinstance(kn, yaml.ScalarNode) and kn.value == str(k)]
            if not found:
                break
            key_node, node = found[-1]
            line = key_node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(k, int) and k < len(node.value):
            node = node.value[k]
            line = node.start_mark.line + 1
        else:
            break
    return line
