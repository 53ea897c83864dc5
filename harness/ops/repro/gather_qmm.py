"""mx.gather_qmm (affine): gather_mm over weights quantized from integer codes."""
import mlx.core as mx
import numpy as np


def pack(codes, bits):
    """Code t of a uint32 word sits at bits [t*bits, (t+1)*bits)."""
    per = 32 // bits
    c = codes.astype(np.uint64).reshape(codes.shape[:-1] + (codes.shape[-1] // per, per))  # explicit: zero-size too
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(bits)
    return np.bitwise_or.reduce(c << shifts, axis=-1).astype(np.uint32)


def mlx_call(operands, params):
    index = {k: None if operands.get(k) is None else mx.array(operands[k].astype(np.uint32))
             for k in ("lhs_indices", "rhs_indices")}
    w = mx.array(pack(operands["codes"], params["bits"]))
    return mx.gather_qmm(operands["x"], w, operands["scales"], operands["biases"], **index,
                         transpose=params.get("transpose", True), group_size=params["group_size"],
                         bits=params["bits"], mode=params.get("mode", "affine"),
                         sorted_indices=params.get("sorted_indices", False))
