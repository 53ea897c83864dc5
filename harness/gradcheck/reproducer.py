"""A standalone reproducer of a gradcheck failure, in the form probes/findings/ uses:
mlx and numpy only, literal inputs, the call, MLX's value against the float64 one,
exit 0 absent / 1 present / 125 cannot test (for `git bisect run`).

The function is imported from its module, or, for a top-level def of a script
(__main__), its source is inlined (names it uses from the script must then be
added by hand). Transforms: vjp and jvp at one element (full mode) and
order 2 vjp; for others (vmap, compile, identity, fast-mode projections) there is
none (the message says which check to rerun).
"""
from __future__ import annotations

import inspect
import textwrap

import numpy as np

HEADER = '''#!/usr/bin/env python3
"""gradcheck reproducer: {line}
Exit 0: defect absent, 1: present, 125: cannot test (no mlx, no GPU); for `git bisect run`."""
import sys
try:
    import mlx.core as mx
    import numpy as np
    mx.set_default_device(mx.gpu if sys.argv[-1:] == ["gpu"] else mx.cpu)   # --device gpu
except (ImportError, ValueError, RuntimeError) as e:
    sys.exit(print("cannot test:", e) or 125)

'''


def _array(x: np.ndarray, dtype: str) -> str:
    flat = x.reshape(-1)
    items = ", ".join(f"complex({v.real!r}, {v.imag!r})" for v in flat) if np.iscomplexobj(x) \
        else ", ".join(repr(float(v)) for v in flat)
    return f"mx.array(np.array([{items}]).reshape({tuple(x.shape)!r})).astype(mx.{dtype})"


def _source(fn) -> str | None:
    """`f` defined: imported from fn's module, or for a top-level def of __main__ its
    source inlined; None for what neither reaches (a lambda, a closure, a module)."""
    name = getattr(fn, "__name__", "")
    module = getattr(fn, "__module__", None)
    if not name.isidentifier() or getattr(fn, "__qualname__", "") != name:
        return None
    if module and module != "__main__":
        return f"from {module} import {name} as f\n"
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return None
    if not src.startswith("def ") or getattr(getattr(fn, "__code__", None), "co_freevars", ()):
        return None
    return src + ("" if name == "f" else f"\nf = {name}\n")


def _template(inputs, counter: list) -> str:
    """fn's positional arguments as Python text, differentiable leaves as L[k]."""
    from .trees import _is_leaf
    if isinstance(inputs, dict):
        return "{" + ", ".join(f"{k!r}: {_template(v, counter)}" for k, v in inputs.items()) + "}"
    if isinstance(inputs, (list, tuple)):
        body = ", ".join(_template(v, counter) for v in inputs)
        return f"[{body}]" if isinstance(inputs, list) else f"({body}{',' if len(inputs) == 1 else ''})"
    if _is_leaf(inputs):
        counter[0] += 1
        return f"L[{counter[0] - 1}]"
    if hasattr(inputs, "tolist"):   # an integer array: literal
        return f"mx.array({np.asarray(inputs).tolist()!r})"
    return repr(inputs)


def script(fn, inputs, check, context: dict) -> str | None:
    at = check.at or {}
    base = check.transform.replace("order 2 ", "")
    if "leaf" not in at or base not in ("vjp", "jvp") or getattr(fn, "parameters", None) is not None:
        return None
    src = _source(fn)
    if src is None:
        return None
    from .float64 import leaf_dtype
    flags, points = context["flags"], context["points"]
    dts = [leaf_dtype(c, check.dtype) for c in flags]
    out = [HEADER.format(line=check.line().replace('"""', "'''")), src, "\n\ndef leaves(t):\n"
           "    if isinstance(t, dict):\n        return [y for v in t.values() for y in leaves(v)]\n"
           "    if isinstance(t, (list, tuple)):\n        return [y for v in t for y in leaves(v)]\n"
           "    return [t] if isinstance(t, mx.array) and (mx.issubdtype(t.dtype, mx.floating) "
           "or t.dtype == mx.complex64) else []\n\n\n"
           f"def call(*L):\n    return leaves(f(*{_template(tuple(inputs), [0])}))\n\n\n"]
    out.append("L = [" + ",\n     ".join(_array(p, d) for p, d in zip(points, dts)) + "]\n")
    outs_dt = "complex64" if check.dtype == "complex64" else leaf_dtype(False, check.dtype)
    cots = context["cot_point"] if check.transform.startswith("order 2") else context["cot1"]
    cot = ",\n       ".join(_array(v, "complex64" if np.iscomplexobj(v) else outs_dt) for v in cots)
    out.append(f"cot = [{cot}]\n")
    out.append(_measure(check, at, context, outs_dt))
    return "".join(out)


def _measure(check, at, context, outs_dt) -> str:
    j, i = at["leaf"], at["element"]
    want, allowed = check.want, check.allowed
    lines = []
    if check.transform.startswith("order 2"):
        cot2 = ",\n        ".join(_array(v, "complex64" if np.iscomplexobj(v) else outs_dt) for v in context["cot2"])
        lines.append(f"cot2 = [{cot2}]\n")
        # the gradient function of (x, v): order 2 differentiates the cotangent too
        lines.append(f"n = {len(context['points'])}\n")
        lines.append("grad = lambda *A: mx.vjp(call, list(A[:n]), [c.astype(y.dtype) for c, y in "
                     "zip(A[n:], call(*A[:n]))])[1]\n")
        lines.append("L = L + cot\n")
        fn, cotname = "grad", "cot2"
    else:
        fn, cotname = "call", "cot"
    if check.transform.endswith("vjp"):
        lines.append(f"outs = {fn}(*L)\n")
        lines.append(f"g = mx.vjp({fn}, L, [c.astype(y.dtype) for c, y in zip({cotname}, outs)])[1][{j}]\n")
        lines.append(f"got = np.array(g.astype(mx.complex64 if g.dtype == mx.complex64 else mx.float32)).reshape(-1)[{i}]\n")
        what = f"the gradient of <{cotname}, {fn}> at L[{j}] element {i}"
    else:
        unit = "1j" if at.get("imag") else "1.0"
        lines.append(f"t = [mx.zeros_like(x) for x in L]\nt[{j}] = mx.array(np.eye(1, t[{j}].size, {i})[0] * {unit})"
                     f".reshape(t[{j}].shape).astype(L[{j}].dtype)\n")
        lines.append(f"jv = mx.jvp({fn}, L, t)[1]\n")
        lines.append("got = np.concatenate([np.array(y.astype(mx.complex64 if y.dtype == mx.complex64 else "
                     f"mx.float32)).reshape(-1) for y in jv])[{at['out']}]\n")
        what = f"d {fn}(L)[flat {at['out']}] / d L[{j}][{i}]"
    lines.append(f"want = {want!r}   # fn in float64 on the CPU, Richardson differences\n")
    lines.append(f"allowed = {allowed!r}   # the dtype's tolerance plus the differences' stated error\n")
    lines.append(f'print("{what}: MLX", got, "float64", want)\n')
    lines.append('sys.exit(print("VERDICT: defect " + ("present" if abs(got - want) > allowed else "absent")) '
                 'or (1 if abs(got - want) > allowed else 0))\n')
    return "".join(lines)
