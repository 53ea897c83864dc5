"""The published JSON Schemas (harness/evidence/schemas/*.schema.json), checked by a
small checker of our own: the validator needs numpy only, so no JSON Schema
package. tests/validation/test_schemas.py holds the same files against the
`jsonschema` package and the writers' real output.

Keywords understood (draft 2020-12 meaning): $ref (to "#/$defs/x" or
"<file>#/$defs/x"), type, enum, const, required, properties,
additionalProperties, propertyNames, items, minItems, maxItems, minLength,
maxLength, pattern, minimum, maximum, exclusiveMinimum, anyOf; $comment,
$schema, $id, $defs and title are annotations. One hint of our own:
"x-fast": "ndarray" accepts a number or a list without walking its elements
(an observed array holds up to a million numbers; the recheck reads them as
an array and fails the check on anything malformed, and the text's depth is
bounded before it is parsed: evidence/strict.py). Any other keyword is a
programming error in the schema file and is refused when it is loaded.

A schema compiles once into closures; each returns None or the first
problem as (JSON pointer, why).
"""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "evidence" / "schemas"
ANNOTATIONS = {"$comment", "$schema", "$id", "$defs", "title", "description"}
KEYWORDS = {"$ref", "type", "enum", "const", "required", "properties", "additionalProperties",
            "propertyNames", "items", "minItems", "maxItems", "minLength", "maxLength", "pattern",
            "minimum", "maximum", "exclusiveMinimum", "anyOf", "x-fast"}


_NOTHING = "no value is allowed here"


class SchemaFileError(RuntimeError):
    """A shipped schema file is malformed (a bug in this package, not in the evidence)."""


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _show(x) -> str:
    text = ascii(x)
    return text if len(text) <= 60 else text[:57] + "..."


@lru_cache(maxsize=None)
def document(name: str) -> dict:
    path = SCHEMA_DIR / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SchemaFileError(f"schema {name}: {e}") from None


class _Compiler:
    """Compiles schema nodes; $ref targets are compiled once (recursion allowed)."""

    def __init__(self):
        self.refs = {}

    def ref(self, ref: str, base: str):
        file, _, pointer = ref.partition("#")
        file = file or base
        key = f"{file}#{pointer}"
        if key not in self.refs:
            cell = []
            self.refs[key] = lambda x, cell=cell: cell[0](x)
            node = document(file)
            for part in [p for p in pointer.split("/") if p]:
                node = node[part]
            cell.append(self.compile(node, file))
        return self.refs[key]

    def compile(self, node, base: str):
        if node is True or node == {}:
            return lambda x: None
        if node is False:
            return lambda x: ("", _NOTHING)
        unknown = set(node) - KEYWORDS - ANNOTATIONS
        if unknown:
            raise SchemaFileError(f"schema {base}: unknown keywords {sorted(unknown)}")
        if node.get("x-fast") == "ndarray":
            return _ndarray
        parts = [self._part(k, v, node, base) for k, v in node.items() if k in KEYWORDS]
        parts = [p for p in parts if p is not None]
        return _all(parts)

    def _part(self, key, value, node, base):
        if key == "$ref":
            return self.ref(value, base)
        if key == "type":
            return _type(value)
        if key in ("enum", "const"):
            return _enum(value if key == "enum" else [value])
        if key == "required":
            return _required(value)
        if key == "properties":
            return _properties({k: self.compile(v, base) for k, v in value.items()})
        if key == "additionalProperties":
            return _additional(set(node.get("properties", {})), self.compile(value, base))
        if key == "propertyNames":
            return _names(self.compile(value, base))
        if key == "items":
            return _items(self.compile(value, base))
        if key == "anyOf":
            return _any([self.compile(v, base) for v in value])
        return _bound(key, value)


def _all(parts):
    if len(parts) == 1:
        return parts[0]

    def check(x):
        for p in parts:
            err = p(x)
            if err:
                return err
        return None
    return check


_PY_TYPES = {"null": (type(None),), "boolean": (bool,), "integer": (int,), "number": (int, float),
             "string": (str,), "array": (list,), "object": (dict,)}


def _type(names):
    names = [names] if isinstance(names, str) else list(names)
    exact = frozenset(t for n in names for t in _PY_TYPES[n])   # type(True) is bool, never int
    whole = "integer" in names and "number" not in names       # 2.0 is an integer in JSON

    def check(x):
        if type(x) in exact or (whole and type(x) is float and math.isfinite(x) and x.is_integer()):
            return None
        return "", ("{} is not " + " or ".join(names), x)
    return check


def _enum(values):
    def same(a, b):   # JSON equality: 1 == 1.0, but True is not 1
        return a == b and isinstance(a, bool) == isinstance(b, bool)
    return lambda x: None if any(same(x, v) for v in values) else ("", ("{} is not one of " + _show(values), x))


def _required(keys):
    def check(x):
        if isinstance(x, dict):
            for k in keys:
                if k not in x:
                    return "", f"required field {k!r} is missing"
        return None
    return check


def _properties(subs: dict):
    def check(x):
        if isinstance(x, dict):
            for k, sub in subs.items():
                if k in x:
                    err = sub(x[k])
                    if err:
                        return f"/{k}{err[0]}", err[1]
        return None
    return check


def _additional(known: set, sub):
    def check(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if k not in known:
                    err = sub(v)
                    if err:
                        why = f"unexpected field {_show(k)}" if err[1] == _NOTHING else err[1]
                        return f"/{k}{err[0]}", why
        return None
    return check


def _names(sub):
    def check(x):
        if isinstance(x, dict):
            for k in x:
                err = sub(k)
                if err:
                    return f"/{k}", f"field name {_show(k)}: {_why(err[1])}"
        return None
    return check


def _items(sub):
    def check(x):
        if isinstance(x, list):
            for n, v in enumerate(x):
                err = sub(v)
                if err:
                    return f"/{n}{err[0]}", err[1]
        return None
    return check


def _any(subs):
    def check(x):
        errs = []
        for s in subs:
            err = s(x)
            if err is None:
                return None
            errs.append(err)
        return max(errs, key=lambda e: len(e[0]))   # the alternative that got furthest
    return check


def _bound(key, limit):
    if key == "pattern":
        return _pattern(re.compile(limit))
    test, what = {
        "minItems": (lambda x: not isinstance(x, list) or len(x) >= limit, f"fewer than {limit} items"),
        "maxItems": (lambda x: not isinstance(x, list) or len(x) <= limit, f"more than {limit} items"),
        "minLength": (lambda x: not isinstance(x, str) or len(x) >= limit, f"shorter than {limit} characters"),
        "maxLength": (lambda x: not isinstance(x, str) or len(x) <= limit, f"longer than {limit} characters"),
        "minimum": (lambda x: not _is_number(x) or x >= limit, f"less than {limit}"),
        "maximum": (lambda x: not _is_number(x) or x <= limit, f"more than {limit}"),
        "exclusiveMinimum": (lambda x: not _is_number(x) or x > limit, f"not more than {limit}"),
    }[key]
    return lambda x: None if test(x) else ("", ("{} is " + what, x if _is_number(x) else "the value"))


def _pattern(rx):
    seen = {}   # names repeat (check kinds, devices, ops): match each text once

    def check(x):
        if not isinstance(x, str):
            return None
        ok = seen.get(x)
        if ok is None:
            ok = bool(rx.search(x))
            if len(seen) < 100_000:
                seen[x] = ok
        return None if ok else ("", ("{} has a form not allowed here", x))
    return check


def _ndarray(x):
    if type(x) in (int, float, list):
        return None
    return "", ("{} is not a number or an array of numbers", x)


def _why(why) -> str:
    """Messages are built only for the problem that is reported (the alternatives of an
    anyOf fail all the time)."""
    return why if isinstance(why, str) else why[0].format(_show(why[1]))


@lru_cache(maxsize=None)
def validator(name: str):
    """The compiled check of one schema file: value -> None or (pointer, why)."""
    return _Compiler().compile(document(name), name)


def problem(name: str, value) -> str | None:
    """One line: why `value` does not follow schema `name` (None: it does)."""
    err = validator(name)(value)
    if err is None:
        return None
    where = err[0] or "/"
    return f"does not follow {name} at {where}: {_why(err[1])}"
