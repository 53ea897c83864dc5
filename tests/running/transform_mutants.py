"""Toy ops for the transform oracles' tests: y = a^3 elementwise, its float64
reference, and MLX calls whose VJP is right or wrong in exactly one corner.

Each call is mx.custom_function over a^3 with a VJP written in MLX ops (so it
composes with grad, vmap and compile like a real rule):

  right      3 conj(a) conj(a) g (MLX's convention for complex: the conjugate
             derivative; written as a product, since MLX 0.32.4's complex power
             VJP lacks that conjugate)
  second     3 stop_gradient(a)^2 g: right at first order, its own derivative is 0
  raises2    3 a^2 g through a helper whose VJP raises: first order works, second raises
  vmapped    3 (y / a) g, with a vmap rule for the forward that returns 2 a^3: the
             VJP reads the output, so it is wrong under vmap only
  traced     right eagerly; while traced (compile or vmap, where nothing can be
             evaluated) it returns 2 a^2 g
  complexed  3 a^2 g without the conjugate: right for real a, wrong for complex
  halfonly   right, plus 1 in bfloat16
  plain      2 a^2 g: wrong everywhere
  novmap     right, but the forward itself has no vmap rule (it raises under vmap)
  jvpwrong   the VJP right, a forward-mode rule (mx.jvp) of 2 a^2 u
  refused    a forward MLX refuses at evaluation (gather_mm with indices in
             bfloat16 on the CPU) whose VJP never evaluates it, so it returns
             gradients for a call the forward refuses; refused_honest's VJP reads
             the output and refuses too
"""
from __future__ import annotations

import dataclasses

import numpy as np

from mlx_vjpcheck.core.opinfo import OpInfo
from mlx_vjpcheck.core.scenario import Scenario
from mlx_vjpcheck.core.tensors import tensor

ME = "transform_mutants"


def reference(inp, params):
    return np.asarray(inp["a"]) ** 3


def reference_vjp(inp, g, params):
    a = np.asarray(inp["a"])
    return {"a": np.conj(3 * a ** 2) * g}


def _cube(rule, vmap_rule=None):
    import mlx.core as mx
    f = mx.custom_function(lambda a: a * a * a)
    f.vjp(lambda primals, cot, out: rule(primals, cot, out))
    if vmap_rule is not None:
        f.vmap(vmap_rule)
    return f


def _conj(mx, a):
    return mx.conj(a) if mx.issubdtype(a.dtype, mx.complexfloating) else a


def right(operands, params):
    import mlx.core as mx
    return _cube(lambda a, g, y: 3 * _conj(mx, a) * _conj(mx, a) * g)(operands["a"])


def second(operands, params):
    import mlx.core as mx
    return _cube(lambda a, g, y: 3 * mx.stop_gradient(a) ** 2 * g)(operands["a"])


def raises2(operands, params):
    import mlx.core as mx
    square = mx.custom_function(lambda a: a * a)

    def no_second(primals, cot, out):
        raise ValueError("[square_vjp] this helper has no derivative")
    square.vjp(no_second)
    return _cube(lambda a, g, y: 3 * square(a) * g)(operands["a"])


def vmapped(operands, params):
    def twice(inputs, axes):
        a = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
        return 2 * a * a * a, axes[0] if isinstance(axes, (list, tuple)) else axes
    return _cube(lambda a, g, y: 3 * (y / a) * g, twice)(operands["a"])


def _traced(a) -> bool:
    try:
        np.array(a)
        return False
    except Exception:   # evaluation refused: inside compile or vmap
        return True


def traced(operands, params):
    return _cube(lambda a, g, y: (2 if _traced(a) else 3) * a ** 2 * g)(operands["a"])


def complexed(operands, params):
    return _cube(lambda a, g, y: 3 * a * a * g)(operands["a"])


def halfonly(operands, params):
    import mlx.core as mx
    return _cube(lambda a, g, y: 3 * a ** 2 * g + (1 if a.dtype == mx.bfloat16 else 0))(operands["a"])


def plain(operands, params):
    return _cube(lambda a, g, y: 2 * a ** 2 * g)(operands["a"])


def novmap(operands, params):
    import mlx.core as mx

    def no_rule(inputs, axes):
        raise ValueError("[cube::vmap] Not implemented")
    return _cube(lambda a, g, y: 3 * _conj(mx, a) * _conj(mx, a) * g, no_rule)(operands["a"])


def jvpwrong(operands, params):
    import mlx.core as mx
    f = _cube(lambda a, g, y: 3 * _conj(mx, a) * _conj(mx, a) * g)
    f.jvp(lambda a, u: 2 * a * a * u)   # one primal: MLX passes the arrays themselves
    return f(operands["a"])


def _refusing(operands, reads_output):
    import mlx.core as mx
    idx = mx.array([0], dtype=mx.uint32)

    def forward(a):
        return mx.gather_mm(a[None, None, :], a[None, :, None], lhs_indices=idx, rhs_indices=idx)
    f = mx.custom_function(forward)
    f.vjp(lambda a, g, y: 2 * a * (g.sum() + (y.sum() if reads_output else 0)))
    return f(operands["a"])


def refused(operands, params):
    return _refusing(operands, False)


def refused_honest(operands, params):
    return _refusing(operands, True)


BASE = OpInfo(name="cube_right", operands=("a",), differentiable=("a",), reference=reference,
              reference_vjp=reference_vjp, mlx_call=f"{ME}:right", rule="dy/da = 3 a^2",
              dtypes=("float32", "bfloat16"), complex=True)
MUTANTS = ("right", "second", "raises2", "vmapped", "traced", "complexed", "halfonly", "plain",
           "novmap", "jvpwrong", "refused", "refused_honest")
OPS = tuple(dataclasses.replace(BASE, name=f"cube_{m}", mlx_call=f"{ME}:{m}") for m in MUTANTS)


def case(mutant: str, values=(1.0, -2.0, 3.0, 0.5), dtype="float32", cot=None, **kw) -> Scenario:
    """A scenario of one mutant, bound to its record."""
    info = next(o for o in OPS if o.name == f"cube_{mutant}")
    a = tensor(np.asarray(values), dtype=dtype)
    g = None if cot is None else tensor(np.asarray(cot), dtype=dtype)
    return Scenario(name=f"cube/{mutant}/{dtype}", op=info.name, operands={"a": a}, wrt=("a",),
                    cotangent=g, **kw).bound(info)
