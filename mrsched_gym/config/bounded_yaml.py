"""YAML parsing with bounds checked before any value is built: the nesting depth, the number of
aliases, and the size of the document once every alias is expanded.

A YAML alias (``*a``) stands for the whole node its anchor (``&a``) names, so a file of a few
lines can stand for billions of values (the "billion laughs" of XML). PyYAML builds such a
document cheaply (the aliases share one Python object), but everything that walks it afterwards
(the schema, the dataclasses, a copy) walks the expansion. An integer of thousands of digits
would reach Python's limit on reading one (a ``ValueError``). Deep nesting (``[[[[...]]]]``) makes
the composer recurse until Python's recursion limit. So :class:`BoundedLoader` counts while it
composes the node graph and, before constructing values, measures the expanded graph with one
memoised pass (time linear in the text, whatever the expansion). Each bound is a
:class:`YAMLBoundError` with the line where it was crossed.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

#: The deepest nesting of mappings and sequences a config file may have (the bundled files nest
#: at most 6 levels).
MAX_YAML_DEPTH = 64
#: The most aliases (``*name``, merges included) a config file may use.
MAX_YAML_ALIASES = 1_000
#: The most nodes (scalars, mappings, sequences) a config file may stand for once every alias is
#: expanded (the largest bundled file has about 2,000).
MAX_YAML_NODES = 100_000
#: The most digits an integer in a config file may have (Python refuses to read more than
#: 4,300 from text; no setting needs more than 20).
MAX_INT_DIGITS = 100


class YAMLBoundError(yaml.YAMLError):  # type: ignore[misc]  # PyYAML ships no types
    """A YAML document crosses one of the bounds; ``line`` is 1-based (0: unknown)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _line(node_or_event: Any) -> int:
    mark = getattr(node_or_event, "start_mark", None)
    return int(mark.line) + 1 if mark is not None else 0


class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """PyYAML's safe loader with the module's bounds (depth, aliases, expanded size)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0
        self.aliases = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Compose one node, counting aliases and the nesting depth before descending."""
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_YAML_ALIASES:
                raise YAMLBoundError(f"more than {MAX_YAML_ALIASES} YAML aliases (*name), a "
                                     "config file's limit",
                                     _line(self.peek_event()))
            return super().compose_node(parent, index)
        self.depth += 1
        try:
            if self.depth > MAX_YAML_DEPTH:
                raise YAMLBoundError(f"YAML nested deeper than {MAX_YAML_DEPTH} levels, a "
                                     "config file's limit",
                                     _line(self.peek_event()))
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_yaml_int(self, node: Any) -> Any:
        """An integer, refused past Python's digit limit (a ``ValueError`` otherwise)."""
        digits = sum(c.isalnum() for c in str(node.value))       # 0x, 0o prefixes count
        if digits > MAX_INT_DIGITS:
            raise YAMLBoundError(f"an integer of {digits:,} digits, more than a config file's "
                                 f"limit ({MAX_INT_DIGITS})", _line(node))
        text = str(node.value)
        sign = -1 if text.startswith("-") else 1
        body = text.lstrip("+-")
        if body.startswith(("0o", "0x")):
            return sign * int(body[2:], 8 if body[1] == "o" else 16)
        return sign * int(body, 10)                   # YAML 1.2: 017 is seventeen

    def get_single_data(self) -> Any:
        """Compose the document, check its expanded size, then construct its values."""
        node = self.get_single_node()
        if node is None:
            return None
        expanded_size(node)
        return self.construct_document(node)


BoundedLoader.add_constructor("tag:yaml.org,2002:int", BoundedLoader.construct_yaml_int)

#: YAML 1.2's core schema for numbers (PyYAML reads YAML 1.1, where ``7e-1`` is text, ``017``
#: is fifteen, ``1_000`` is a thousand and ``1:30`` is ninety): one reading of numbers in every
#: file this package reads, the same as the training config's hyper-parameters. (A sign before
#: ``0x``/``0o`` is read too, as YAML 1.1 read it.)
YAML12_INT = re.compile(r"^[-+]?(?:[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
YAML12_FLOAT = re.compile(r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
                          r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")
NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
BoundedLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in NUMBER_TAGS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
BoundedLoader.add_implicit_resolver(NUMBER_TAGS[0], YAML12_INT, list("-+0123456789"))
BoundedLoader.add_implicit_resolver(NUMBER_TAGS[1], YAML12_FLOAT, list("-+0123456789."))


def expanded_size(root: Any) -> int:
    """The number of nodes the graph under ``root`` stands for with every alias expanded.

    Memoised per node, so a shared node costs one visit; the walk keeps its own stack (the depth
    is bounded already, but a deep walk needs no recursion either).

    Raises:
        YAMLBoundError: More than :data:`MAX_YAML_NODES` nodes, nesting deeper than
            :data:`MAX_YAML_DEPTH`, or an alias inside the node it
            names (a recursive document).
    """
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes and not children_done:
            continue
        children = _children(node)
        if not children_done:
            if key in open_nodes:
                raise YAMLBoundError("a YAML alias inside the node it names (a recursive "
                                     "document)", _line(node))
            open_nodes.add(key)
            stack.append((node, True))
            for child in children:
                if id(child) in open_nodes:
                    raise YAMLBoundError("a YAML alias inside the node it names (a "
                                         "recursive document)", _line(child))
                if id(child) not in sizes:
                    stack.append((child, False))
            continue
        open_nodes.discard(key)
        total = 1 + sum(sizes[id(c)] for c in children)
        depth = 1 + max((depths[id(c)] for c in children), default=0)
        if total > MAX_YAML_NODES:
            raise YAMLBoundError(f"YAML that stands for more than {MAX_YAML_NODES:,} values once "
                                 "its aliases are expanded, a config file's limit", _line(node))
        if depth > MAX_YAML_DEPTH:
            raise YAMLBoundError(f"YAML nested deeper than {MAX_YAML_DEPTH} levels once its "
                                 "aliases are expanded, a config file's limit", _line(node))
        sizes[key] = total
        depths[key] = depth
    return sizes[id(root)]


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []
