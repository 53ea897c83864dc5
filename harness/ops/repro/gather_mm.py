"""mx.gather_mm: Y_q = A[i_q] @ B[j_q] over gathered left and right matrices."""
import mlx.core as mx
import numpy as np


def mlx_call(operands, params):
    index = {k: None if operands.get(k) is None else mx.array(operands[k].astype(np.uint32))
             for k in ("lhs_indices", "rhs_indices")}
    return mx.gather_mm(operands["a"], operands["b"], **index,
                        sorted_indices=params.get("sorted_indices", False))
