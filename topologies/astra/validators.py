"""Shared readers and checks of the ASTRA-sim file parsers.

Every function raises :class:`~topologies.errors.InputError` naming the file,
the field (``key`` or ``key[index]``) and the value; no ``KeyError``,
``TypeError`` or YAML/JSON exception escapes.
"""

from __future__ import annotations

import functools
import math
import os
import re
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from topologies.errors import InputError
from topologies.files import atomic_write
from topologies.network import BANDWIDTH_RANGE, LATENCY_RANGE, Dimension, Network, canonical_kind
from topologies.units import MAX_BANDWIDTH_GBPS, MAX_LATENCY_NS, MIN_BANDWIDTH_GBPS

_MAX_SHOWN = 80


class JsonFloat(float):
    """A JSON number that remembers its decimal text (for exact products)."""

    text: str

    def __new__(cls, text: str) -> JsonFloat:
        obj = super().__new__(cls, text)
        obj.text = text
        return obj


def line_of(text: str, line_no: int) -> str | None:
    """Line ``line_no`` (1-based) of ``text``, stripped and shortened, if any."""
    lines = text.splitlines()
    if 1 <= line_no <= len(lines):
        line = lines[line_no - 1].strip()
        return line if len(line) <= _MAX_SHOWN else line[: _MAX_SHOWN - 3] + "..."
    return None


def read_text(path: str | os.PathLike[str]) -> str:
    """The text of ``path``; every failure is an :class:`InputError`."""
    file = str(path)
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", "path", file, file) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a file", "path", file, file) from None
    except UnicodeDecodeError:
        raise InputError("not a text file (not UTF-8)", "path", file, file) from None
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", "path", file, file) from None


#: The plain words PyYAML's resolver reads as booleans or null, not as text.
_YAML_RESERVED = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF "
    "null Null NULL".split())
_FLAT_WORD = r"[A-Za-z][A-Za-z0-9_]*"
_FLAT_NUMBER = r"[-+]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
_FLAT_ITEM = rf"(?:{_FLAT_WORD}|{_FLAT_NUMBER})"
_FLAT_LINE = re.compile(
    rf"({_FLAT_WORD}): +\[ *((?:{_FLAT_ITEM} *(?:, *{_FLAT_ITEM} *)*)?)\] *(?: #.*)?")
_FLAT_SKIP = re.compile(r" *(?:#.*)?")
_FLAT_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")


def flat_yaml(text: str) -> dict[str, list[Any]] | None:
    """A network YAML of ``key: [item, ...]`` lines read without PyYAML, or ``None``.

    Only the plainest form is read here: printable ASCII, each line blank, a
    comment or ``key: [...]`` at column 0 with unique keys, every key and item a
    plain word (not one YAML reads as a boolean or null) or a decimal number.
    The result is the one PyYAML gives (tests/topologies/test_flat_yaml.py
    checks it on generated documents); anything else is ``None``, and
    :func:`load_yaml` asks PyYAML, whose import is a large part of a small run's
    start-up.
    """
    if not text.isascii():
        return None
    out: dict[str, list[Any]] = {}
    for line in text.split("\n"):
        if not line.isprintable():
            return None
        m = _FLAT_LINE.fullmatch(line)
        if m is None:
            if _FLAT_SKIP.fullmatch(line):
                continue
            return None
        key, body = m.group(1), m.group(2)
        if key in _YAML_RESERVED or key in out:
            return None
        items: list[Any] = []
        for word in (w.strip() for w in body.split(",")) if body.strip() else ():
            if word in _YAML_RESERVED:
                return None
            if word[0].isalpha():
                items.append(word)
            elif _FLAT_INT.fullmatch(word):
                items.append(int(word))
            else:
                items.append(float(word))
        out[key] = items
    return out or None


@functools.cache
def _yaml_loader() -> type:
    """PyYAML's safe loader, also reading ``1e3`` as a number (as YAML 1.2 and yaml-cpp
    do), with unique mapping keys (made on first use: yaml is a costly import)."""
    import yaml

    class YamlLoader(yaml.SafeLoader):
        """The safe loader with YAML 1.2 floats and unique keys."""

    def construct_mapping_unique(loader: YamlLoader, node: yaml.MappingNode,
                                 deep: bool = False) -> dict[Any, Any]:
        """A mapping whose keys are unique: a key given twice is an error at its line."""
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # unhashable key: PyYAML reports it
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (given twice)", key_node.start_mark)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    YamlLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                               construct_mapping_unique)
    YamlLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
        list("-+0123456789."),
    )
    return YamlLoader


def load_yaml(text: str, file: str) -> Any:
    """YAML ``text`` parsed (YAML 1.2 floats); a syntax error names its line."""
    flat = flat_yaml(text)
    if flat is not None:
        return flat
    import yaml

    try:
        return yaml.load(text, Loader=_yaml_loader())  # a SafeLoader subclass: safe
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "syntax error"
        if mark is not None:
            line = mark.line + 1
            raise InputError(
                f"invalid YAML: {problem} (line {line}, column {mark.column + 1})",
                f"line {line}",
                line_of(text, line),
                file,
            ) from None
        raise InputError(f"invalid YAML: {problem}", "syntax", None, file) from None
    except (yaml.YAMLError, RecursionError) as err:
        raise InputError(f"invalid YAML: {err}", "syntax", None, file) from None


def load_json(text: str, file: str) -> Any:
    """JSON ``text`` parsed, floats as :class:`JsonFloat`; a syntax error names its line."""
    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise InputError("duplicate key (given twice)", key, None, file)
            result[key] = value
        return result

    import json  # late: a network YAML needs no json (start-up is part of every run's time)

    try:
        return json.loads(text, parse_float=JsonFloat, object_pairs_hook=unique)
    except InputError:
        raise
    except json.JSONDecodeError as err:
        raise InputError(
            f"invalid JSON: {err.msg} (line {err.lineno}, column {err.colno})",
            f"line {err.lineno}",
            line_of(text, err.lineno),
            file,
        ) from None
    except (ValueError, RecursionError) as err:
        raise InputError(f"invalid JSON: {err}", "syntax", None, file) from None


def as_mapping(data: Any, file: str, what: str) -> dict[str, Any]:
    """``data`` as a ``str``-keyed dict; an empty or non-mapping document is an error."""
    if data is None:
        raise InputError(f"the file is empty (expected {what})", "document", None, file)
    if not isinstance(data, dict):
        raise InputError(
            f"expected {what} as a mapping of keys to values",
            "document",
            type(data).__name__,
            file,
        )
    return {str(k): v for k, v in data.items()}


def warn_unknown(file: str, what: str, keys: Iterable[str]) -> tuple[str, ...]:
    """Warn once about ``keys`` (sorted) that the reader does not know; return them."""
    unknown = tuple(sorted(keys))
    if unknown:
        warnings.warn(
            f"{file or '<input>'}: unknown {what} keys ignored: {', '.join(unknown)}",
            UserWarning,
            stacklevel=3,
        )
    return unknown


def required_list(data: dict[str, Any], key: str, file: str) -> list[Any]:
    """``data[key]``, which must be a non-empty list (one entry per dimension)."""
    if key not in data:
        raise InputError("missing required key", key, None, file)
    value = data[key]
    if not isinstance(value, list):
        raise InputError("must be a list with one entry per dimension", key, value, file)
    if not value:
        raise InputError("must list at least one dimension", key, value, file)
    return value


def same_length(file: str, first: tuple[str, list[Any]], *others: tuple[str, list[Any]]) -> None:
    """Check that every ``(name, list)`` has as many entries as ``first``."""
    name0, list0 = first
    for name, values in others:
        if len(values) != len(list0):
            raise InputError(
                f"has {len(values)} entries but {name0} has {len(list0)} "
                "(one entry per dimension)",
                name,
                values,
                file,
            )


def number(value: Any, field: str, file: str) -> float:
    """``value`` as a finite float (``bool`` and text are refused)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError("not a number", field, value, file)
    try:
        result = float(value)
    except OverflowError:
        raise InputError("number too large", field, value, file) from None
    if not math.isfinite(result):
        raise InputError("not a finite number", field, value, file)
    return result


def positive(value: Any, field: str, file: str) -> float:
    """A finite number > 0."""
    result = number(value, field, file)
    if result <= 0:
        raise InputError("must be positive", field, value, file)
    return result


def non_negative(value: Any, field: str, file: str) -> float:
    """A finite number >= 0."""
    result = number(value, field, file)
    if result < 0:
        raise InputError("must not be negative", field, value, file)
    return result


def bandwidth(value: Any, field: str, file: str) -> float:
    """A bandwidth in GB/s within the accepted range (``MIN_`` to ``MAX_BANDWIDTH_GBPS``)."""
    result = positive(value, field, file)
    if not MIN_BANDWIDTH_GBPS <= result <= MAX_BANDWIDTH_GBPS:
        raise InputError(BANDWIDTH_RANGE, field, value, file)
    return result


def latency(value: Any, field: str, file: str) -> float:
    """A latency in ns, ``0`` to ``MAX_LATENCY_NS``."""
    result = non_negative(value, field, file)
    if result > MAX_LATENCY_NS:
        raise InputError(LATENCY_RANGE, field, value, file)
    return result


def whole_number(value: Any, field: str, file: str, minimum: int) -> int:
    """A whole number >= ``minimum``.

    Integral floats such as ``8.0`` or ``1e3`` are accepted while they are
    exact (up to 2^53); ``1e30`` is not a count anybody means.
    """
    if isinstance(value, bool):
        raise InputError("must be a whole number", field, value, file)
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        if abs(value) > 2**53:
            raise InputError("too large for a whole number written as a float "
                             "(write the digits)", field, value, file)
        value = int(value)
    if not isinstance(value, int):
        raise InputError("must be a whole number", field, value, file)
    if value < minimum:
        raise InputError(f"must be at least {minimum}", field, value, file)
    return value


def dim_kind(value: Any, field: str, file: str) -> str:
    """The canonical topology kind (``Ring``, ``FullyConnected``, ``Switch``)."""
    try:
        return canonical_kind(value, field)
    except InputError as err:
        raise err.in_file(file) from None


def name_of(file: str) -> str:
    """A network name from its file: the stem (``""`` without a file)."""
    return Path(file).stem if file else ""


def make_network(
    dims: list[Dimension],
    file: str,
    npus_field: str,
    npus_value: Any,
    nic_latency_ns: float = 0.0,
    router_latency_ns: float = 0.0,
) -> Network:
    """A :class:`Network` of ``dims`` with at least 2 NPUs, named after ``file``."""
    if math.prod(d.npus for d in dims) < 2:
        raise InputError(
            "a network needs at least 2 NPUs (the product over all dimensions)",
            npus_field,
            npus_value,
            file,
        )
    try:
        return Network(tuple(dims), nic_latency_ns, router_latency_ns, name=name_of(file))
    except InputError as err:
        raise err.in_file(file) from None


def make_dimension(i: int, file: str, *args: Any, **kwargs: Any) -> Dimension:
    """A :class:`Dimension`; an error names ``field[i]`` and ``file``."""
    try:
        return Dimension(*args, **kwargs)
    except InputError as err:  # pragma: no cover - values are checked before
        err.field = f"{err.field}[{i}]"
        raise err.in_file(file) from None


def plain(value: float) -> int | float:
    """``50.0`` -> ``50`` for readable files; other floats unchanged."""
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def number_text(value: float) -> str:
    """The shortest JSON text of ``value`` (``50`` rather than ``50.0``)."""
    shown = plain(value)
    return str(shown) if isinstance(shown, int) else repr(shown)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` safely (:func:`topologies.files.atomic_write`)."""
    atomic_write(path, text)
