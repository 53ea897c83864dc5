"""gradcheck's keyword options, checked up front: a bad one is one ValueError or
TypeError line naming it."""
from __future__ import annotations

from dataclasses import dataclass

TRANSFORMS = ("vjp", "jvp", "identity", "vmap", "compile")
DTYPES = ("float32", "float16", "bfloat16", "complex64", "float64")
# (atol, rtol) per dtype for MLX's gradient against the float64 one, on top of the
# oracle's stated bound; atol is relative to the compared array's largest value.
# Set for the dtype's own rounding along a short chain of ops; override per dtype.
TOLERANCES = {"float64": (2e-6, 2e-6), "float32": (1e-4, 1e-4), "complex64": (1e-4, 1e-4),
              "float16": (1e-2, 1e-2), "bfloat16": (6e-2, 6e-2)}
FULL_MAX = 256        # auto mode: element-by-element up to this many input elements


@dataclass(frozen=True)
class Options:
    order: int
    transforms: tuple
    dtypes: tuple | None
    tolerances: dict
    fast: bool | None
    projections: int
    seed: int
    raise_exception: bool
    shrink: float
    device: str | None
    isolated: bool = False


def _bad(name: str, value, want: str, kind=ValueError):
    raise kind(f"gradcheck: {name}={value!r}: expected {want}")


def _names(name: str, value, allowed: tuple) -> tuple:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, (tuple, list)) or not value:
        _bad(name, value, f"a non-empty tuple of {', '.join(allowed)}", TypeError)
    for v in value:
        if v not in allowed:
            _bad(name, v, f"one of {', '.join(allowed)}")
    return tuple(dict.fromkeys(value))


def _tolerances(value) -> dict:
    if value is None:
        return dict(TOLERANCES)
    if not isinstance(value, dict):
        _bad("tolerances", value, "a dict {dtype: (atol, rtol) or one number}", TypeError)
    out = dict(TOLERANCES)
    for k, t in value.items():
        if k not in TOLERANCES:
            _bad("tolerances", k, f"dtype keys among {', '.join(TOLERANCES)}")
        pair = (t, t) if isinstance(t, (int, float)) and not isinstance(t, bool) else t
        if (not isinstance(pair, (tuple, list)) or len(pair) != 2
                or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0 for x in pair)):
            _bad(f"tolerances[{k!r}]", t, "(atol, rtol) with numbers >= 0, or one number")
        out[k] = (float(pair[0]), float(pair[1]))
    return out


def _int(name, value, low: int, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        _bad(name, value, "an int", TypeError)
    if value < low or (high is not None and value > high):
        _bad(name, value, f"{low}" + (f"..{high}" if high is not None else " or more"))
    return value


def check(order=1, transforms=TRANSFORMS, dtypes=None, tolerances=None, fast=None, projections=2,
          seed=0, raise_exception=True, shrink=5.0, device=None, isolated=False) -> Options:
    if fast not in (None, True, False):
        _bad("fast", fast, "None (auto), True or False", TypeError)
    if not isinstance(raise_exception, bool):
        _bad("raise_exception", raise_exception, "True or False", TypeError)
    if isinstance(shrink, bool) or not isinstance(shrink, (int, float)) or shrink < 0:
        _bad("shrink", shrink, "seconds >= 0 to spend shrinking a failure (0: do not shrink)")
    if not isinstance(isolated, bool):
        _bad("isolated", isolated, "True or False", TypeError)
    if device not in (None, "cpu", "gpu"):
        _bad("device", device, "None (the default device), 'cpu' or 'gpu'")
    return Options(_int("order", order, 1, 2), _names("transforms", transforms, TRANSFORMS),
                   None if dtypes is None else _names("dtypes", dtypes, DTYPES), _tolerances(tolerances),
                   fast, _int("projections", projections, 1), _int("seed", seed, 0), raise_exception,
                   float(shrink), device, isolated)
