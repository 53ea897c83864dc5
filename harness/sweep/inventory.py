"""What MLX offers, read from the installed MLX itself: every public function of
mlx.core, mlx.core.fast, mlx.core.fft and mlx.core.linalg, and every activation,
loss and layer of mlx.nn. A function that a new MLX adds shows up here without
anyone listing it, and so as "not covered" until the API table (sweep/api.py)
checks it or says why it is not differentiable.

The modules are parameters (`public(namespaces)`), so a test can hand in a
double of the API with one more function and see it counted as uncovered.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass


@dataclass(frozen=True)
class Function:
    name: str        # qualified as users write it: "mx.sin", "mx.linalg.inv", "nn.gelu", "nn.Linear"
    signature: str   # one line, from nanobind's signature or inspect (for people, never parsed for behaviour)


def namespaces() -> tuple:
    """(prefix, module, what) for the installed MLX; `what` picks which members count."""
    import mlx.core as mx
    import mlx.nn as nn
    return (("mx", mx, "functions"), ("mx.fast", mx.fast, "functions"), ("mx.fft", mx.fft, "functions"),
            ("mx.linalg", mx.linalg, "functions"), ("nn", nn.activations, "functions"),
            ("nn.losses", nn.losses, "functions"), ("nn", nn, "layers"))


def _signature(obj) -> str:
    nb = getattr(obj, "__nb_signature__", None)
    if nb:
        return nb[0][0].split("\n")[0]
    try:
        return f"{getattr(obj, '__name__', '?')}{inspect.signature(obj)}"
    except (TypeError, ValueError):
        return getattr(obj, "__name__", "?")


def _members(module, what: str):
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if what == "layers":
            if inspect.isclass(obj) and _is_module_class(obj) and name != "Module":
                yield name, obj
        elif callable(obj) and not inspect.isclass(obj) and not inspect.ismodule(obj):
            # A function of this module, not one it imported (nn.losses imports mx functions).
            home = getattr(obj, "__module__", "") or ""
            if hasattr(obj, "__nb_signature__") or home.startswith(module.__name__):
                yield name, obj


def _is_module_class(cls) -> bool:
    return any(b.__name__ == "Module" and b.__module__.startswith("mlx.nn") for b in inspect.getmro(cls))


def public(spaces=None) -> list:
    """Every public function and layer, once each, in a stable order."""
    seen, out = set(), []
    for prefix, module, what in spaces if spaces is not None else namespaces():
        for name, obj in _members(module, what):
            qual = f"{prefix}.{name}"
            if qual not in seen:
                seen.add(qual)
                out.append(Function(qual, _signature(obj)))
    return out
