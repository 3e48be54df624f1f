"""Safe YAML reading for user files: size and alias caps, no duplicate keys, problems instead of tracebacks.

Plain scalars resolve as YAML 1.2 does, not as PyYAML's YAML 1.1: only `true` / `false` are booleans
(`yes`, `no`, `on`, `off` stay text: a slot `parking: yes` means "yes"), there are no base-60 numbers
(`leaveat: 17:15` stays "17:15", not 1035) and no timestamps (`day: 2026-11-28` stays text). Numbers are
plain decimals only: one with a leading zero stays text (`0800`, `01223`: as a number it would lose its
zero), and so do `0x10`, `0o7` and `1_000`, which YAML 1.2 (or 1.1) would read as numbers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from evaluator.errors import Problem

MAX_YAML_BYTES = 1024 * 1024
# Values aliases (`*name`) may add to a document written out: plenty to share blocks between a
# dialogue's turns, far too few for a "billion laughs" (nine nested lists of ten aliases: a 1 KB file
# standing for 10^9 values, which validating took the memory of the machine to list as problems).
MAX_ALIASED_VALUES = 10_000
# Text a document may stand for written out, aliases included: a file's worth more than a file holds. A
# few aliases of one long text stand for far more text than values (a 50 KB text named 9,000 times in a
# 90 KB file is 450 MB of `contains` strings, which a run took all the memory there was to check).
MAX_WRITTEN_OUT_CHARS = 2 * MAX_YAML_BYTES


class _TooManyAliasedValuesError(Exception):
    def __init__(self, found: str) -> None:
        self.found = found


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping with the same key twice (YAML would keep the last), resolves
    plain scalars as the module's docstring says, and refuses aliases standing for more than
    MAX_ALIASED_VALUES values, or a document standing for more than MAX_WRITTEN_OUT_CHARS of text."""

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None:
            sizes: dict[int, tuple[int, int]] = {}
            values, chars = _written_out(node, sizes)
            added = values - len(sizes)
            if added > MAX_ALIASED_VALUES:
                raise _TooManyAliasedValuesError(
                    f"its aliases (*name) stand for {added} more values, over {MAX_ALIASED_VALUES}"
                )
            if chars > MAX_WRITTEN_OUT_CHARS:
                raise _TooManyAliasedValuesError(
                    f"with its aliases (*name) written out it stands for {chars} characters of text, over "
                    f"{MAX_WRITTEN_OUT_CHARS}"
                )
        return node


def _written_out(node: yaml.Node, sizes: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """How many values, and characters of text, `node` stands for with every alias in it written out;
    `sizes` holds each node counted (a node met again while it is counted, a recursive alias, counts
    as itself alone: it is refused later)."""
    if id(node) in sizes:
        return sizes[id(node)]
    sizes[id(node)] = own = (1, len(node.value) if isinstance(node, yaml.ScalarNode) else 0)
    children: list[yaml.Node] = []
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [part for pair in node.value for part in pair]
    counted = [_written_out(child, sizes) for child in children]
    sizes[id(node)] = (own[0] + sum(v for v, _ in counted), own[1] + sum(c for _, c in counted))
    return sizes[id(node)]


_RESOLVED_AGAIN = {f"tag:yaml.org,2002:{name}" for name in ("bool", "int", "float", "timestamp")}
_UniqueKeyLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _RESOLVED_AGAIN]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789")
)
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?
        |[-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""",
        re.X,
    ),
    list("-+0123456789."),
)


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    """The mapping, its own keys each once; merge keys (`<<: *base`) bring in the keys it does not
    write itself (those it writes win)."""
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == _MERGE:
            continue
        key = loader.construct_object(key_node)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise yaml.constructor.ConstructorError(
                None, None, f"a key must be a plain value, not {type(key).__name__}", key_node.start_mark
            )
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f'duplicate key "{key}"', key_node.start_mark)
        seen.add(key)
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node))


_MERGE = "tag:yaml.org,2002:merge"
_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def read_yaml(path: Path) -> tuple[Any, list[Problem]]:
    """(document, []) or (None, problems) for one file; never raises for bad content."""
    source = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_YAML_BYTES:
            return None, [
                Problem(
                    source=source,
                    field="",
                    found=f"file is {size} bytes",
                    fix=f"keep a scenario file under {MAX_YAML_BYTES} bytes",
                )
            ]
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [
            Problem(
                source=source,
                field="",
                found=f"cannot read the file ({exc})",
                fix="check the path and that the file is UTF-8 text",
            )
        ]
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader), []  # noqa: S506 - a SafeLoader subclass
    except _TooManyAliasedValuesError as exc:
        fix = "write out what is repeated, or share smaller blocks through & and *"
        return None, [Problem(source=source, field="", found=exc.found, fix=fix)]
    except RecursionError:  # the parser is recursive: a value nested hundreds of levels deep
        found = "values nested too deeply to read"
        return None, [
            Problem(source=source, field="", found=found, fix="nest lists and mappings less deeply")
        ]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        fix = "correct the YAML syntax there"
        if problem.startswith("could not determine a constructor for the tag"):  # the safe loader's refusal
            fix = "write a plain value there: tags that build objects (!!python/...) are never read"
        # Where the parser noticed is often past the mistake (an unclosed quote is noticed at the end
        # of the file): the context says where what it was reading began.
        context, began = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and began is not None and (mark is None or began.line != mark.line):
            problem += f" ({context} that began at line {began.line + 1}, column {began.column + 1})"
            fix += ", or where it began"
        return None, [Problem(source=source, field=where, found=f"invalid YAML: {problem}", fix=fix)]
