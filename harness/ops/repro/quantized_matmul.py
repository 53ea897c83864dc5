"""mx.quantized_matmul (affine): x times weights quantized from integer codes."""
import mlx.core as mx
import numpy as np


def pack(codes, bits):
    """Code t of a uint32 word sits at bits [t*bits, (t+1)*bits)."""
    per = 32 // bits
    c = codes.astype(np.uint64).reshape(codes.shape[:-1] + (-1, per))
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(bits)
    return np.bitwise_or.reduce(c << shifts, axis=-1).astype(np.uint32)


def mlx_call(operands, params):
    w = mx.array(pack(operands["codes"], params["bits"]))
    return mx.quantized_matmul(operands["x"], w, operands["scales"], operands["biases"],
                               transpose=params.get("transpose", True), group_size=params["group_size"],
                               bits=params["bits"], mode=params.get("mode", "affine"))
