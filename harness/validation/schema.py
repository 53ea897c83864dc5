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
bounded before it is parsed: evidence/strict.py), or the array such a list was
read as (validation/arrays.py). Any other keyword is a programming error in the
schema file and is refused when it is loaded.

A schema compiles once into Python source, one function per schema node that
needs one (a node that only names a $ref is that $ref's function; each part of a
node is written out inline, in the node's key order, so the first problem found is
the one the keyword order gives); each function returns None or the first problem
as (JSON pointer, why). Compiled text rather than a tree of closures: a results
file of the whole catalog is ~250,000 JSON values, and a call per keyword per
value was most of its checking time. The source is made from the shipped schema
files alone (names, limits and patterns; texts as repr()): nothing from evidence
is ever part of it.

Why not a library (measured by bench/schema_libraries.py on the 1960-scenario
results.json, 29.4 MiB, load average about 2): fastjsonschema compiles schemas to
Python too, but walks every number of every array (3.4 s against 0.1 s here) and
knows drafts 4-7 only; jsonschema-rs checks the file in 0.04 s but turns NaN into
null on its way into Rust, so it rejects honest evidence (NaN is data here) and
takes JSON types only, not the arrays validation/arrays.py reads compactly. Both
would also add a dependency to the numpy-only validator. The `jsonschema` package
(a test dependency) holds the same schema files against the writers' real output
in tests/validation/test_schemas.py, so this checker cannot drift from the standard.
"""
from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

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
    text = _preview(x, 60)
    return text if len(text) <= 60 else text[:57] + "..."


def _preview(x, room: int) -> str:
    """ascii(x), cut once it passes `room` characters: a container's items are shown only
    while there is room (ascii of a 2.6-million-value array would take half a minute)."""
    if isinstance(x, (list, dict)):
        items = x.items() if isinstance(x, dict) else x
        open_, close = ("{", "}") if isinstance(x, dict) else ("[", "]")
        parts, used = [], 1
        for item in items:
            part = (f"{_preview(item[0], room)}: {_preview(item[1], room)}" if isinstance(x, dict)
                    else _preview(item, room))
            parts.append(part)
            used += len(part) + 2
            if used > room:
                return open_ + ", ".join(parts) + ", ..."
        return open_ + ", ".join(parts) + close
    text = ascii(x[:room + 1] if isinstance(x, str) else x)
    return text


@lru_cache(maxsize=None)
def document(name: str) -> dict:
    path = SCHEMA_DIR / name
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SchemaFileError(f"schema {name}: {e}") from None


class _Compiler:
    """Compiles schema nodes into the source of one module: one function per node that
    needs one, calling each other by name ($ref targets compiled once; recursion allowed).

    A node made only of tests on its own value (type, enum, const, bounds, pattern) is
    also an expression, true exactly when its function returns None; where such a node
    is checked (a property, an item, an alternative, a $ref), the expression is written
    out and the function is called only to say why it failed. Tests that an earlier
    `type` of the same node already settles (isinstance guards) are left out."""

    def __init__(self):
        self.refs, self.lines, self.count = {}, [], 0
        self.tests = {}   # function name -> its (test, problem) pairs, for a node that is an expression
        self.env = {"_NOTHING": _NOTHING, "_show": _show, "_why": _why, "_is_number": _is_number,
                    "_ndarray": _ndarray, "_depth": _depth, "_isfinite": math.isfinite,
                    "_refuse_all": _refuse_all}

    def _name(self, stem: str, value=None) -> str:
        """A fresh global name (bound to `value` in the module, when given)."""
        self.count += 1
        name = f"{stem}{self.count}"
        if value is not None:
            self.env[name] = value
        return name

    def ref(self, ref: str, base: str):
        """The compiled check of a $ref target."""
        return self.compile({"$ref": ref}, base)

    def _ref(self, ref: str, base: str) -> str:
        """The name of the function of a $ref target."""
        file, _, pointer = ref.partition("#")
        file = file or base
        key = f"{file}#{pointer}"
        if key not in self.refs:
            node = document(file)
            for part in [p for p in pointer.split("/") if p]:
                node = node[part]
            self.refs[key] = self._name("ref_")
            self._function(self.refs[key], node, file)
        return self.refs[key]

    def compile(self, node, base: str):
        """The check of one schema node: value -> None or (pointer, why)."""
        name = self.function(node, base)
        if name is None:
            return _accept
        exec(compile("\n".join(self.lines), f"<schema {base}>", "exec"), self.env)   # noqa: S102
        return self.env[name]

    def function(self, node, base: str) -> str | None:
        """The name of the function checking `node`; None for a node that accepts anything."""
        if node is True or node == {}:
            return None
        if node is False:
            return "_refuse_all"
        self._known(node, base)
        if node.get("x-fast") == "ndarray":
            return "_ndarray"
        if set(node) - ANNOTATIONS == {"$ref"}:
            return self._ref(node["$ref"], base)
        name = self._name("node_")
        self._function(name, node, base)
        return name

    def _known(self, node, base: str) -> None:
        unknown = set(node) - KEYWORDS - ANNOTATIONS
        if unknown:
            raise SchemaFileError(f"schema {base}: unknown keywords {sorted(unknown)}")

    def _function(self, name: str, node, base: str) -> None:
        if node is True or node == {} or node is False:   # a $ref to a boolean schema
            self.lines += [f"def {name}(x):", f"    return {'_refuse_all(x)' if node is False else 'None'}"]
            return
        self._known(node, base)
        if node.get("x-fast") == "ndarray":
            self.lines += [f"def {name}(x):", "    return _ndarray(x)"]
            return
        body, tests, types = [], [], None   # types: the Python types a passed `type` leaves
        for key, value in node.items():
            if key not in KEYWORDS or key == "x-fast":
                continue
            pairs = self._tests(key, value, base, types)
            if pairs is None:
                tests = None
                body += self._part(key, value, node, base, types)
            else:
                tests = None if tests is None else tests + pairs
                body += [f"if not ({_at(t, 'x')}): return {_at(p, 'x')}" for t, p in pairs]
            if key == "type":
                types = _types(value)
        if tests is not None:
            self.tests[name] = tests
        self.lines += [f"def {name}(x):"] + ["    " + line for line in body] + ["    return None"]

    def _tests(self, key, value, base: str, types) -> list | None:
        """[(test, problem)] with @ for the value, when the keyword is tests alone."""
        if key == "type":
            return [_type_test(value, self)]
        if key in ("enum", "const"):
            return [_enum_test(value if key == "enum" else [value], self)]
        if key == "pattern":
            check = self._name("pattern_", _pattern(re.compile(value)))
            return [(f"{check}(@) is None", f"{check}(@)")]
        if key in _BOUNDS:
            return [_bound_test(key, value, self, types)]
        if key == "$ref":
            target = self._ref(value, base)
            pairs = self.tests.get(target)
            return [(_all_of(pairs), f"{target}(@)")] if pairs is not None else None
        return None

    def _part(self, key, value, node, base, types) -> list:
        """Lines checking `x` for one keyword that is more than tests, returning its problem."""
        if key == "$ref":
            return _call(self._ref(value, base), "x", '""', self)
        guard = "if isinstance(x, dict):" if key in ("required", "properties", "additionalProperties",
                                                      "propertyNames") else "if isinstance(x, list):"
        if types is not None and types <= ({dict} if "dict" in guard else {list}):
            guard = "if True:"   # the node's type already made it one
        if key == "required":
            return [guard] + [f"    if {k!r} not in x: return '', {f'required field {k!r} is missing'!r}"
                              for k in value]
        if key == "properties":
            return self._properties(value, base, guard)
        if key == "additionalProperties":
            return self._additional(set(node.get("properties", {})), value, base, guard)
        if key == "propertyNames":
            sub = self.function(value, base)
            return [] if sub is None else [
                guard, "    for k in x:", f"        e = {sub}(k)",
                "        if e: return f'/{k}', f'field name {_show(k)}: {_why(e[1])}'"]
        if key == "items":
            sub = self.function(value, base)
            return [] if sub is None else [guard, "    for n, v in enumerate(x):"] + [
                "        " + line for line in _call(sub, "v", "f'/{n}'", self)]
        if key == "anyOf":
            return self._any([self.function(v, base) for v in value])
        raise SchemaFileError(f"keyword {key!r} not compiled")

    def _properties(self, subs: dict, base: str, guard: str) -> list:
        lines = [guard]
        for k, sub_node in subs.items():
            sub = self.function(sub_node, base)
            if sub is not None:
                lines += [f"    if {k!r} in x:", f"        v = x[{k!r}]"] + [
                    "        " + line for line in _call(sub, "v", repr("/" + k), self)]
        return lines if len(lines) > 1 else []

    def _additional(self, known: set, sub_node, base: str, guard: str) -> list:
        sub = self.function(sub_node, base)
        if sub is None:
            return []
        known_name = self._name("known_", frozenset(known))
        unexpected = "(f'unexpected field {_show(k)}' if e[1] == _NOTHING else e[1])"
        return [guard, "    for k, v in x.items():", f"        if k not in {known_name}:",
                f"            e = {sub}(v)", f"            if e: return f'/{{k}}{{e[0]}}', {unexpected}"]

    def _any(self, subs: list) -> list:
        """The first alternative that passes passes; else the one that got furthest."""
        if any(s is None for s in subs):
            return []
        lines, indent = [], ""
        for k, s in enumerate(subs):
            pairs = self.tests.get(s)
            if pairs is not None:
                lines += [f"{indent}if not ({_at(_all_of(pairs), 'x')}):", f"{indent}    e = {s}(x)"]
            else:
                lines += [f"{indent}e = {s}(x)", f"{indent}if e is not None:"]
            lines.append(f"{indent}    {'es = [e]' if k == 0 else 'es.append(e)'}")
            indent += "    "
        return lines + [f"{indent}return max(es, key=_depth)"]


def _at(template: str, var: str) -> str:
    return template.replace("@", var)


def _all_of(pairs: list) -> str:
    return " and ".join(f"({t})" for t, _ in pairs) or "True"


def _call(fn: str, arg: str, where: str, c: _Compiler) -> list:
    """Lines checking `arg` by a node's function, returning its problem under `where`
    (an expression of the pointer so far; '""' for none)."""
    pairs = c.tests.get(fn)
    lines = [f"e = {fn}({arg})", "if e: return e" if where == '""' else f"if e: return {where} + e[0], e[1]"]
    if pairs is None:
        return lines
    return [f"if not ({_at(_all_of(pairs), arg)}):"] + ["    " + line for line in lines]


def _refuse_all(x):
    return "", _NOTHING


def _accept(x):
    return None


def _depth(err) -> int:
    return len(err[0])


_PY_TYPES = {"null": (type(None),), "boolean": (bool,), "integer": (int,), "number": (int, float),
             "string": (str,), "array": (list,), "object": (dict,)}


def _types(names) -> set:
    """The Python types a value that passed `type` can have."""
    names = [names] if isinstance(names, str) else list(names)
    out = {t for n in names for t in _PY_TYPES[n]}
    return out | ({float} if "integer" in names else set())


def _type_test(names, c: _Compiler) -> tuple:
    names = [names] if isinstance(names, str) else list(names)
    exact = frozenset(t for n in names for t in _PY_TYPES[n])   # type(True) is bool, never int
    whole = "integer" in names and "number" not in names       # 2.0 is an integer in JSON
    test = f"type(@) in {c._name('types_', exact)}"
    if whole:
        test = f"{test} or (type(@) is float and _isfinite(@) and @.is_integer())"
    return test, f"'', ({'{} is not ' + ' or '.join(names)!r}, @)"


def _enum_test(values: list, c: _Compiler) -> tuple:
    why = "{} is not one of " + _show(values)
    if all(type(v) is str for v in values):   # text only: a set lookup is JSON equality
        return f"type(@) is str and @ in {c._name('texts_', frozenset(values))}", f"'', ({why!r}, @)"
    return f"{c._name('enum_', _one_of(values))}(@)", f"'', ({why!r}, @)"


def _one_of(values: list):
    def same(a, b):   # JSON equality: 1 == 1.0, but True is not 1
        return a == b and isinstance(a, bool) == isinstance(b, bool)
    return lambda x: any(same(x, v) for v in values)


_BOUNDS = {   # keyword: (the type it applies to, the test where it does, what a failure is, what it shows)
    "minItems": (list, "len(@) >= {}", "fewer than {} items", "'the value'"),
    "maxItems": (list, "len(@) <= {}", "more than {} items", "'the value'"),
    "minLength": (str, "len(@) >= {}", "shorter than {} characters", "'the value'"),
    "maxLength": (str, "len(@) <= {}", "longer than {} characters", "'the value'"),
    "minimum": (float, "@ >= {}", "less than {}", "@"),
    "maximum": (float, "@ <= {}", "more than {}", "@"),
    "exclusiveMinimum": (float, "@ > {}", "not more than {}", "@"),
}


def _bound_test(key, limit, c: _Compiler, types) -> tuple:
    applies, test, what, shown = _BOUNDS[key]
    test = test.format(c._name("limit_", limit))
    if applies is float:   # numbers: int or float, never bool
        if types is None or not types <= {int, float}:
            test = f"not _is_number(@) or {test}"
    elif types is None or not types <= {applies}:
        test = f"not isinstance(@, {applies.__name__}) or {test}"
    return test, f"'', ({'{} is ' + what.format(limit)!r}, {shown})"


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
    # np.ndarray: a list validation/arrays.py read as an array at its place, a list to the schema
    if type(x) in (int, float, list, np.ndarray):
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
