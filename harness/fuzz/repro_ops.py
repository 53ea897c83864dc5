"""Per-op source embedded in reproducer scripts: a float64 reference written
again from the maths (independent of harness.reference, so the two check each
other) and the MLX call. Each snippet defines INTEGER_OPERANDS, ref_forward,
ref_vjp and mlx_call(mx, ops, lhs, rhs, sorted_flag, params).
"""
from __future__ import annotations

GATHER_MM_REF = r'''
def _pairs(a_batch, b_batch, lhs, rhs):
    """Index pairs (i_q, j_q): omitted arrays default to arange over the batch."""
    n = lambda shape: int(np.prod(shape, dtype=np.int64))
    li = np.arange(n(a_batch)).reshape(a_batch) if lhs is None else lhs
    ri = np.arange(n(b_batch)).reshape(b_batch) if rhs is None else rhs
    li, ri = np.broadcast_arrays(li, ri)
    return list(zip(li.ravel().tolist(), ri.ravel().tolist())), li.shape


def mm_forward(a, b, lhs, rhs):
    pairs, batch = _pairs(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B = a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])
    M, K, N = A.shape[1], A.shape[2], B.shape[2]
    Y = np.zeros((len(pairs), M, N))
    for q, (i, j) in enumerate(pairs):
        for m in range(M):
            for c in range(N):
                Y[q, m, c] = sum(A[i, m, k] * B[j, k, c] for k in range(K))
    return Y.reshape(tuple(batch) + (M, N))


def mm_vjp(a, b, g, lhs, rhs):
    """dA[l] += G_q B[j_q]^T over q with i_q = l;  dB[l] += A[i_q]^T G_q over j_q = l."""
    pairs, _ = _pairs(a.shape[:-2], b.shape[:-2], lhs, rhs)
    A, B = a.reshape((-1,) + a.shape[-2:]), b.reshape((-1,) + b.shape[-2:])
    M, K, N = A.shape[1], A.shape[2], B.shape[2]
    G = g.reshape((-1, M, N))
    dA, dB = np.zeros(A.shape), np.zeros(B.shape)
    for q, (i, j) in enumerate(pairs):
        for m in range(M):
            for k in range(K):
                dA[i, m, k] += sum(G[q, m, c] * B[j, k, c] for c in range(N))
        for k in range(K):
            for c in range(N):
                dB[j, k, c] += sum(A[i, m, k] * G[q, m, c] for m in range(M))
    return dA.reshape(a.shape), dB.reshape(b.shape)
'''

SNIPPETS = {
    "gather_mm": GATHER_MM_REF + r'''
INTEGER_OPERANDS = ()


def ref_forward(inp, lhs, rhs, params):
    return mm_forward(inp["a"], inp["b"], lhs, rhs)


def ref_vjp(inp, g, lhs, rhs, params):
    da, db = mm_vjp(inp["a"], inp["b"], g, lhs, rhs)
    return {"a": da, "b": db}


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    return mx.gather_mm(ops["a"], ops["b"], lhs_indices=lhs, rhs_indices=rhs,
                        sorted_indices=sorted_flag)
''',
    "gather_qmm": GATHER_MM_REF + r'''
INTEGER_OPERANDS = ("codes",)


def weights(inp, params):
    """W = code * scale + bias per group of group_size along K; stored (E, N, K)."""
    gs = params["group_size"]
    codes, s, b = inp["codes"], inp["scales"], inp["biases"]
    col = np.arange(codes.shape[-1]) // gs
    return codes * s[..., col] + b[..., col]


def ref_forward(inp, lhs, rhs, params):
    return mm_forward(inp["x"], np.swapaxes(weights(inp, params), -1, -2), lhs, rhs)


def ref_vjp(inp, g, lhs, rhs, params):
    w_kn = np.swapaxes(weights(inp, params), -1, -2)
    dx, dw = mm_vjp(inp["x"], w_kn, g, lhs, rhs)
    dw = np.swapaxes(dw, -1, -2)   # back to the stored (E, N, K) layout
    gs, codes = params["group_size"], inp["codes"]
    ds, db = np.zeros(inp["scales"].shape), np.zeros(inp["biases"].shape)
    for k in range(codes.shape[-1]):
        ds[..., k // gs] += codes[..., k] * dw[..., k]
        db[..., k // gs] += dw[..., k]
    return {"x": dx, "scales": ds, "biases": db}


def pack(codes, bits):
    """Code t of a uint32 word sits at bits [t*bits, (t+1)*bits)."""
    per = 32 // bits
    c = codes.astype(np.uint64).reshape(codes.shape[:-1] + (-1, per))
    shifts = np.arange(per, dtype=np.uint64) * np.uint64(bits)
    return np.bitwise_or.reduce(c << shifts, axis=-1).astype(np.uint32)


def mlx_call(mx, ops, lhs, rhs, sorted_flag, params):
    w = mx.array(pack(ops["codes"], params["bits"]))
    return mx.gather_qmm(ops["x"], w, ops["scales"], ops["biases"], lhs_indices=lhs,
                         rhs_indices=rhs, transpose=params.get("transpose", True),
                         group_size=params["group_size"], bits=params["bits"],
                         mode=params.get("mode", "affine"), sorted_indices=sorted_flag)
''',
}


def register(op: str, source: str) -> None:
    SNIPPETS[op] = source


def source(op: str) -> str:
    if op not in SNIPPETS:
        from . import family_strategies  # noqa: F401  registers the family snippets
    try:
        return SNIPPETS[op]
    except KeyError:
        raise ValueError(f"no reproducer source for op {op!r}") from None
