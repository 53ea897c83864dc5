"""hadamard_transform: mx.hadamard_transform(a, scale), MLX's Hadamard primitive.

Along the last axis of length n = m * 2^k (m in 1, 12, 20, 28) the forward is
y = scale * M a with M = H_m (x) S_k: the Kronecker product of MLX's order-m
Hadamard matrix (the ones in N. J. A. Sloane's library, which MLX embeds) and
the Sylvester matrix S_k[i, j] = (-1)^popcount(i & j). The reverse rule is
dx = scale * M^T g. S_k and H_12 are symmetric, so there M^T = M; H_20 and
H_28 are not, so a rule that re-applies the forward transform (Hadamard::vjp
returns its own jvp) is wrong for every n divisible by 20 or 28.

Complex input: MLX's docs make the transform equivalent to hadamard(n) @ a *
scale, which keeps the imaginary part (the reference: complex128, dx = scale
M^T g), but mx.hadamard_transform casts complex64 to float32 (its dtype is the
input's only when floating) and transforms the real part: a float32 result,
and the VJP of the real part. That is the register's
complex_input_cast_to_real (every release from 0.25.2 to 0.32.4); the
"complex/..." rows carry it, and the strategy draws no complex64.

The MLX call is ops/repro/hadamard_transform.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import seeded_ints, tensor
from ._support import expression as E

# The order-m factors MLX uses, row by row ('+' is 1, '-' is -1).
FACTORS = {
    12: """+-++++++++++ --+-+-+-+-+- +++-++----++ +---+--+-++- +++++-++---- +-+---+--+-+
           ++--+++-++-- +--++---+--+ ++----+++-++ +--+-++---+- ++++----+++- +-+--+-++---""",
    20: """+----+----++--++-++- -+----+---+++---+-++ --+----+---+++-+-+-+ ---+----+---+++++-+-
           ----+----++--++-++-+ -+++++-----+--+++--+ +-+++-+---+-+--+++-- ++-++--+---+-+--+++-
           +++-+---+---+-+--+++ ++++-----++--+-+--++ --++-+-++-+-----++++ ---++-+-++-+---+-+++
           +---++-+-+--+--++-++ ++---++-+----+-+++-+ -++---++-+----+++++- -+--+--++-+----+----
           +-+-----++-+----+--- -+-+-+---+--+----+-- --+-+++------+----+- +--+--++------+----+""",
    28: """+------++----++-+--+-+--++-- -+-----+++-----+-+--+-+--++- --+-----+++---+-+-+----+--++
           ---+-----+++---+-+-+-+--+--+ ----+-----+++---+-+-+++--+-- -----+-----++++--+-+--++--+-
           ------++----++-+--+-+--++--+ --++++-+-------++--+++-+--+- ---++++-+-----+-++--+-+-+--+
           +---+++--+----++-++--+-+-+-- ++---++---+----++-++--+-+-+- +++---+----+----++-++--+-+-+
           ++++--------+-+--++-++--+-+- -++++--------+++--++--+--+-+ -+-++-++--++--+--------++++-
           +-+-++--+--++--+--------++++ -+-+-++--+--++--+----+---+++ +-+-+-++--+--+---+---++---++
           ++-+-+-++--+------+--+++---+ -++-+-+-++--+------+-++++--- +-++-+---++--+------+-++++--
           -++--++-+-++-+++----++------ +-++--++-+-++-+++-----+----- ++-++---+-+-++-+++-----+----
           -++-++-+-+-+-+--+++-----+--- --++-++++-+-+----+++-----+-- +--++-+-++-+-+----+++-----+-
           ++--++-+-++-+-+----++------+""",
}


def factor(m: int) -> np.ndarray:
    rows = FACTORS[m].split()
    return np.array([[1.0 if c == "+" else -1.0 for c in r] for r in rows])


def sylvester(p: int) -> np.ndarray:
    """S[i, j] = (-1)^popcount(i & j), p a power of two."""
    return np.array([[(-1.0) ** bin(i & j).count("1") for j in range(p)] for i in range(p)])


def split(n: int) -> tuple:
    """n = m * p with m in (1, 12, 20, 28) and p a power of two."""
    for m in (1, 12, 20, 28):
        p = n // m
        if n % m == 0 and p & (p - 1) == 0:
            return m, p
    raise ValueError(f"hadamard_transform: no m * 2^k decomposition of {n}")


def matrix(n: int) -> np.ndarray:
    """M with y = M a along the last axis (unscaled)."""
    m, p = split(n)
    return sylvester(p) if m == 1 else np.kron(factor(m), sylvester(p))


def scale_of(params, n) -> float:
    s = params.get("scale")
    return 1.0 / np.sqrt(n) if s is None else float(s)


# --- float64 reference ---------------------------------------------------------------------

def _float(x) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(np.complex128) if np.iscomplexobj(x) else x.astype(np.float64)


def reference(inp, params):
    """scale * M a; complex128 for complex input (MLX's docs: the transform is
    equivalent to hadamard(n) @ a * scale, which keeps the imaginary part)."""
    a = _float(inp["a"])
    n = a.shape[-1]
    M = matrix(n)
    y = np.zeros(a.shape, dtype=a.dtype)
    for j in range(n):
        for i in range(n):
            y[..., j] += M[j, i] * a[..., i]
    return scale_of(params, n) * y


def reference_vjp(inp, g, params):
    """dx[i] = scale * sum_j M[j, i] g[j]: the transpose, not M again."""
    g = _float(g)
    if np.iscomplexobj(inp["a"]):
        g = g.astype(np.complex128)
    n = g.shape[-1]
    M = matrix(n)
    dx = np.zeros(g.shape, dtype=g.dtype)
    for j in range(n):
        for i in range(n):
            dx[..., i] += M[j, i] * g[..., j]
    return {"a": scale_of(params, n) * dx}


# --- catalog: powers of two, the symmetric H_12 and the unsymmetric H_20 / H_28 ------------

UNTRANSPOSED = "untransposed_factor"   # defect class: dx = M g instead of M^T g


def _case(name, a, scale, cot=None, tags=(), fd=False, desc=""):
    return Scenario(name=f"hadamard_transform/{name}", op="hadamard_transform", operands={"a": a},
                    wrt=("a",), params={"scale": scale}, cotangent=cot, family="hadamard",
                    fd_step=1.0 / 16 if fd else None, defect_tags=tuple(tags), description=desc)


def _rows(n, rows, seed):
    return tensor(seeded_ints((rows, n), seed))


def _cot(n, rows, seed):
    return tensor(seeded_ints((rows, n), seed))


def scenarios() -> list:
    out = [_case(f"pow2/n{n}/scale_{s}", _rows(n, 3, 70 + n), s, cot=_cot(n, 3, 71 + n), fd=n <= 8)
           for n, s in ((2, 1.0), (4, 0.5), (8, -0.25), (16, None), (64, 0.125))]
    out += [
        _case("n1/scale_0.5", _rows(1, 3, 80), 0.5, desc="n = 1 is a plain multiply, not the primitive"),
        _case("h12/n12/scale_1", _rows(12, 2, 81), 1.0, cot=_cot(12, 2, 82), fd=True,
              desc="H_12 is symmetric: M^T = M"),
        _case("h12/n48/scale_0.25", _rows(48, 2, 83), 0.25, cot=_cot(48, 2, 84)),
        _case("h12/n24/default_scale", _rows(24, 2, 85), None),
        _case("strided/n16", tensor(seeded_ints((16, 4), 86), views=[{"op": "transpose", "axes": [1, 0]}]),
              0.5, cot=_cot(16, 4, 87), desc="the transform runs along a non-contiguous axis"),
        _case("batched/n8", tensor(seeded_ints((2, 3, 8), 88)), 1.0,
              cot=tensor(seeded_ints((2, 3, 8), 89))),
    ]
    out += [_case(f"{UNTRANSPOSED}/n{n}", _rows(n, 2, 90 + n), s, cot=_cot(n, 2, 91 + n), tags=(UNTRANSPOSED,),
                  fd=n <= 28, desc="unsymmetric order-m factor: the VJP must apply M^T")
            for n, s in ((20, 1.0), (28, 1.0), (40, 0.5), (56, None))]
    out.append(_case(f"{UNTRANSPOSED}/n20/ones", _rows(20, 1, 0), 1.0, tags=(UNTRANSPOSED,),
                     desc="all-ones input and cotangent: dx = column sums of M, not row sums"))
    return out + complex_scenarios()


# defect class: complex64 input is cast to float32 (the imaginary part dropped, a float32
# result), where MLX's docs make the transform hadamard(n) @ a * scale
COMPLEX_CAST = "complex_input_cast_to_real"


def _complex_rows(n, rows, seed):
    return tensor(seeded_ints((rows, n), seed) + 1j * seeded_ints((rows, n), seed + 1), dtype="complex64")


def complex_scenarios() -> list:
    return [_case("complex/pow2/n4", _complex_rows(4, 2, 120), 0.5, cot=_complex_rows(4, 2, 122),
                  tags=(COMPLEX_CAST,), desc="complex input: MLX transforms the real part alone, float32 out"),
            _case("complex/h12/n12", _complex_rows(12, 1, 124), 1.0, cot=_complex_rows(12, 1, 126),
                  tags=(COMPLEX_CAST,), desc="")]


# --- fuzz strategy -------------------------------------------------------------------------

SIZES = (2, 4, 8, 1, 16, 12, 20, 28, 24, 40, 32, 56, 48, 64, 80)
SCALES = (1.0, 0.5, -1.0, 0.25, 2.0, -0.125)   # dyadic: the products stay exact


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    # complex64 is the register's complex_input_cast_to_real on every input with an imaginary
    # part (the catalog's complex rows carry it): not drawn
    dtype = draw(D.choice(tuple(d for d in dtypes if d != "complex64") or ("float32",)))
    n = draw(D.choice(SIZES))
    batch = tuple(draw(D.irange(1, 3)) for _ in range(draw(D.irange(0, 2))))
    rows = draw(D.irange(1, 3))
    small = dict(lo=-1, hi=2) if dtype != "float32" else {}   # half precision: sums stay below 256
    a = D.layout(draw, batch, (rows, n), draw(D.irange(0, 2**16)), dtype, **small)
    cot, mode = D.cotangent(draw, batch + (rows, n), dtype)
    scale = draw(D.choice(SCALES))
    return D.finish(Scenario(name="", op="hadamard_transform", operands={"a": a}, wrt=("a",),
                             cotangent=cot, params={"scale": scale}, family="hadamard",
                             description=f"generated: n {n}, batch {batch}, cotangent {mode}"))


def call_expression(params, names) -> str:
    return E.call("mx.hadamard_transform", names["a"], scale=E.lit(params.get("scale")))


OPS = (OpInfo(
    name="hadamard_transform", known_defects=(KnownDefect(UNTRANSPOSED), KnownDefect(COMPLEX_CAST)),
    summary="mx.hadamard_transform (Hadamard): n = m * 2^k, scale",
    operands=("a",), differentiable=("a",), reference=reference, reference_vjp=reference_vjp,
    exact=True, multilinear=True,
    rule="along the last axis y = scale M a with M = H_m kron S_k (n = m 2^k); dx = scale M^T g, "
         "the transpose: M itself only where H_m is symmetric (m = 1, 12)",
    mlx_call=".ops.repro.hadamard_transform:mlx_call", call_expression=call_expression,
    primitives=("Hadamard", "Multiply", "AsType"), dtypes=("float32", "float16", "bfloat16"), complex=True,
    scenarios=scenarios, strategy=fuzz_case),)
