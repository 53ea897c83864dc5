"""A plugin op with two different defects in one gradient (for the signature
test): y = a^3 elementwise, whose VJP is wrong by +1 in bfloat16 and doubled
for a rank-0 operand, and right otherwise. Named in $MLX_VJPCHECK_PLUGINS."""
import numpy as np

from mlx_vjpcheck.core import draw as D
from mlx_vjpcheck.core.opinfo import OpInfo
from mlx_vjpcheck.core.scenario import Scenario


def reference(inp, params):
    return np.asarray(inp["a"]) ** 3


def reference_vjp(inp, g, params):
    return {"a": 3 * np.asarray(inp["a"]) ** 2 * g}


def mlx_call(operands, params):
    import mlx.core as mx
    f = mx.custom_function(lambda a: a * a * a)

    def rule(a, g, y):
        right = 3 * a * a * g
        if a.ndim == 0:
            right = 2 * right
        return right + 1 if a.dtype == mx.bfloat16 else right
    f.vjp(rule)
    return f(operands["a"])


def fuzz_case(draw, dtypes=("float32",)):
    dtype = draw(D.choice(dtypes))
    rank = draw(D.choice((1, 2, 0)))          # rank 0 is a corner, not the simplest case
    shape = tuple(draw(D.irange(1, 3)) for _ in range(rank))
    values = D.hashed_ints(shape, draw(D.irange(0, 99)), -3, 4)
    return D.finish(Scenario(name="", op="twodefects", operands={"a": D.tensor(values, dtype=dtype)},
                             wrt=("a",), family="cube"))


OPS = (OpInfo(name="twodefects", operands=("a",), differentiable=("a",), reference=reference,
              reference_vjp=reference_vjp, mlx_call="two_defects_plugin:mlx_call", strategy=fuzz_case,
              rule="dy/da = 3 a^2", dtypes=("float32", "bfloat16"), second_order=False, vmap=False,
              compile=False),)
