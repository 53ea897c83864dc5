"""Strict JSON for every file the tool writes or reads, with non-finite numbers as data.

JSON has no NaN or infinity, and strict parsers reject the `NaN` / `Infinity`
tokens Python writes by default. Every evidence file therefore writes a
non-finite number as a one-key object in its place:

    {"nonfinite": "nan"}   {"nonfinite": "inf"}   {"nonfinite": "-inf"}

(scenario, results and finding schemas /2 and later). `loads` turns exactly
those objects back into floats and refuses the bare tokens, so a file that
validates is strict JSON and NaN / inf round-trip everywhere: observed and
expected values, errors, tolerances, scenario inputs.
"""
from __future__ import annotations

import gc
import json
import math

KEY = "nonfinite"
_TEXT = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _name(x: float) -> str:
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def encode(obj):
    """A copy of obj (dicts, lists, tuples, floats, complex numbers, numpy scalars)
    with every non-finite float replaced by its tagged object and every complex
    number by its [re, im] pair."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {KEY: _name(obj)}
    if isinstance(obj, complex):   # a complex value is its [re, im] pair (the schemas' complex form)
        return [encode(obj.real), encode(obj.imag)]
    if isinstance(obj, dict):
        return {k: encode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [encode(v) for v in obj]
    if hasattr(obj, "item") and hasattr(obj, "dtype"):   # a numpy scalar
        return encode(obj.item())
    return obj


def complex_pairs(obj):
    """A copy of obj with every complex number replaced by its [re, im] pair and nothing
    else changed (for the workers' pipes, which carry non-finite floats as they are)."""
    if isinstance(obj, complex):
        return [obj.real, obj.imag]
    if isinstance(obj, dict):
        return {k: complex_pairs(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [complex_pairs(v) for v in obj]
    if hasattr(obj, "item") and hasattr(obj, "dtype"):   # a numpy scalar
        return complex_pairs(obj.item())
    return obj


def _decode(d: dict):
    if len(d) == 1 and KEY in d and d[KEY] in _TEXT:
        return _TEXT[d[KEY]]
    return d


def _refuse(token: str):
    raise ValueError(f"bare {token} is not JSON (non-finite numbers are written as {{\"{KEY}\": ...}})")


def dumps(obj, **kw) -> str:
    return json.dumps(encode(obj), allow_nan=False, **kw)


def loads(text, hook=None):
    """Strict JSON with non-finite numbers as data; `hook(obj)`, when given, sees every
    object (a non-finite number already a float) as it is completed, and gives its value."""
    # A parse builds a tree, never a cycle, so the cyclic collector has nothing to find in
    # it; left on, it walks the growing tree again and again (a 28 MB results file: 0.3 s).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return json.loads(text, object_hook=_decode if hook is None else (lambda d: hook(_decode(d))),
                          parse_constant=_refuse)
    except RecursionError:   # Python's parser recurses: a hostile nesting depth is bad input
        raise ValueError("JSON nested too deeply") from None
    finally:
        if enabled:
            gc.enable()


def text_of(data: bytes) -> str:
    """JSON bytes as the text json.loads(bytes) parses (its encoding detection, surrogates
    kept): a caller can then let go of the bytes before the objects are built."""
    return data.decode(json.detect_encoding(data), "surrogatepass")


# Validation reads the same results.json in several checkers (binding, cross-checks,
# verdicts, summary, attestation): about 11 MB for the full catalog, 0.3 s a parse.
# A file's bytes are parsed once; the cache holds the bytes object itself, so an
# id() cannot be reused while its entry lives. Callers only read what they get.
_PARSED: dict = {}
_PARSED_MAX = 4


def parsed(data):
    """loads(data), once per bytes / str object while it is among the last few parsed."""
    hit = _PARSED.get(id(data))
    if hit is not None and hit[0] is data:
        return hit[1]
    value = loads(data)
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[id(data)] = (data, value)
    return value


def member(files: dict, name: str):
    """files[name] parsed (an evidence member), or None when it is absent or not strict JSON."""
    try:
        return parsed(files[name])
    except (KeyError, ValueError, UnicodeDecodeError):
        return None
