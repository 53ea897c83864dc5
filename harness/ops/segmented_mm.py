"""segmented_mm: Y[s] = A[:, start_s:end_s] @ B[start_s:end_s, :] for each segment
[start_s, end_s) of the shared K axis. MLX defines no VJP for it (SegmentedMM
has none: asking raises "Not implemented"), so this is a record of that fact,
not a defect: the catalog checks the forward on the segment patterns a
gradient rule would have to get right (empty, overlapping, out of order,
batched segment arrays), and that a VJP is refused rather than made up.
The MLX call is ops/repro/segmented_mm.py.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.opinfo import OpInfo
from ..core.scenario import Scenario
from ..core.tensors import integer_tensor, seeded_ints, tensor
from ._support import expression as E


def reference(inp, params):
    a, b = np.asarray(inp["a"], dtype=np.float64), np.asarray(inp["b"], dtype=np.float64)
    seg = np.asarray(inp["segments"], dtype=np.int64)
    pairs = seg.reshape(-1, 2)
    M, N = a.shape[0], b.shape[1]
    out = np.zeros((len(pairs), M, N))
    for q, (start, end) in enumerate(pairs.tolist()):
        for m in range(M):
            for n in range(N):
                out[q, m, n] = math.fsum(a[m, k] * b[k, n] for k in range(start, end))
    return out.reshape(seg.shape[:-1] + (M, N))


def _case(name, segments, K=6, desc=""):
    return Scenario(name=f"segmented_mm/{name}", op="segmented_mm",
                    operands={"a": tensor(seeded_ints((2, K), 80)), "b": tensor(seeded_ints((K, 3), 81)),
                              "segments": integer_tensor(segments)},
                    wrt=("a", "b"), family="segmented", description=desc)


def scenarios() -> list:
    return [
        _case("partition", [[0, 2], [2, 5], [5, 6]], desc="segments that tile K"),
        _case("overlap_and_order", [[3, 6], [0, 4], [2, 2]], desc="overlapping, out of order, one empty"),
        _case("whole_and_empty", [[0, 6], [6, 6]]),
        _case("batched_segments", [[[0, 3], [3, 6]], [[1, 2], [0, 6]]], desc="a (2, 2, 2) segment array"),
    ]


def call_expression(params, names) -> str:
    return E.call("mx.segmented_mm", names["a"], names["b"], E.index(names["segments"], "uint32"))


OPS = (OpInfo(
    name="segmented_mm", summary="mx.segmented_mm (SegmentedMM): no VJP in MLX; forward checked, VJP refused",
    operands=("a", "b", "segments"), differentiable=("a", "b"), integer_operands=("segments",),
    reference=reference, exact=True, mlx_call=".ops.repro.segmented_mm:mlx_call", call_expression=call_expression,
    primitives=("SegmentedMM",),
    dtypes=("float32", "float16", "bfloat16"), complex=False, second_order=False,
    vmap=False,   # MLX gives SegmentedMM no VJP (so no second order) and no vmap; the forward compiles
    scenarios=scenarios,
    has_vjp=False),)
