"""Hypothesis strategies whose examples ARE Scenario records.

Every generated call is plain data, so a finding can be replayed, validated
and exported like any catalog scenario. Draw order matters for shrinking:
hypothesis shrinks each choice towards its first option, so the simplest
option comes first everywhere (side "lhs", contiguous layout, width 1, ...).

Values come from a drawn integer seed through numpy (cheap to draw, and the
seed shrinks to 0, which means "all ones"); they are small integers or dyadic
fractions so float32 arithmetic is exact and a mismatch cannot be rounding.
"""
from __future__ import annotations

import functools
import hashlib
import itertools
import json

import numpy as np
from hypothesis import strategies as st

from ..scenario import Scenario, Tensor

DIM = st.integers(1, 4)
SMALL = st.integers(1, 3)


@functools.lru_cache(maxsize=None)
def irange(lo, hi):
    """Cached strategy objects: building one per draw dominates generation time."""
    return st.integers(lo, hi)


@functools.lru_cache(maxsize=None)
def choice(options):
    return st.sampled_from(options)
BACKING_BASE = 50.0   # values outside the logical view are large and distinctive


# --- small helpers -----------------------------------------------------------

def ints(shape, seed, lo=-4, hi=5) -> np.ndarray:
    """Small integers in [lo, hi) from a seed (0 means all ones). A multiplicative
    hash of the position is enough here and far cheaper than a seeded RNG."""
    n = int(np.prod(shape, dtype=np.int64))
    if seed == 0:
        return np.ones(shape)
    h = (np.arange(1, n + 1, dtype=np.uint64) * np.uint64(2654435761)
         + np.uint64(seed) * np.uint64(40503)) % np.uint64(2**32)
    h = (h ^ (h >> np.uint64(13))) * np.uint64(2246822519) % np.uint64(2**32)
    return (((h >> np.uint64(8)) % np.uint64(hi - lo)).astype(np.float64) + lo).reshape(shape)


def tensor(arr, dtype="float32", views=()) -> Tensor:
    arr = np.asarray(arr, dtype=np.float64)
    return Tensor(tuple(float(v) for v in arr.ravel()), tuple(arr.shape), dtype, tuple(views))


def index_tensor(arr) -> Tensor:
    arr = np.asarray(arr, dtype=np.int64)
    return Tensor(tuple(int(v) for v in arr.ravel()), tuple(arr.shape), "uint32")


def nonempty_subsets(names) -> list:
    """Joint first, then smaller subsets: shrinking moves towards the joint VJP."""
    out = []
    for r in range(len(names), 0, -1):
        out += list(itertools.combinations(names, r))
    return out


def case_name(op, payload) -> str:
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
    return f"fuzz/{op}/{digest}"


def finish(s: Scenario) -> Scenario:
    """Name a scenario by its content, so equal cases share a name."""
    d = s.to_dict()
    d.pop("name")
    return Scenario.from_dict(dict(d, name=case_name(s.op, d)))


def index_values(draw, shape, bound, sort):
    """Index array of `shape` into `bound` items: repeated, identity, omitted or random."""
    n = int(np.prod(shape, dtype=np.int64))
    pattern = draw(choice(("repeat", "random", "identity", "omit")))
    if pattern == "repeat":
        vals = [draw(irange(0, bound - 1))] * n
    elif pattern == "identity":
        vals = [q % bound for q in range(n)]
    elif pattern == "omit" and bound > 1:   # every index but one, so one item is unused
        skip = draw(irange(0, bound - 1))
        keep = [v for v in range(bound) if v != skip]
        vals = [keep[q % len(keep)] for q in range(n)]
    else:   # one seed instead of n draws: generation stays cheap
        vals = [int(v) for v in ints((n,), draw(irange(1, 2**16)), 0, bound)]
    if sort:   # the sorted flag promises non-decreasing indices in row-major order
        vals = sorted(vals)
    return np.asarray(vals, dtype=np.int64).reshape(shape)


def broadcast_variant(draw, shape, allow_drop=True):
    """A shape that broadcasts to `shape`: some dims set to 1, leading dims maybe dropped."""
    dims = [draw(choice((d, 1))) if d > 1 else d for d in shape]
    drop = draw(irange(0, len(dims))) if allow_drop and draw(irange(0, 3)) == 3 else 0
    return tuple(dims[drop:])


def layout(draw, batch, inner, seed, dtype, lo=-4, hi=5):
    """An operand of logical shape batch+inner with a chosen storage layout.

    transpose: stored with the last two axes swapped; slice: a window onto a
    larger buffer whose extra values are large (the backing tail); stride: every
    other element of the last axis; broadcast: a stride-0 view of one batch item.
    """
    shape = tuple(batch) + tuple(inner)
    kind = draw(choice(("contiguous", "slice", "transpose", "stride", "broadcast")))
    logical = ints(shape, seed, lo, hi)
    if kind == "slice" and batch:
        extra = draw(SMALL)
        store_shape = (batch[0] + extra,) + shape[1:]
        store = BACKING_BASE + np.arange(np.prod(store_shape)).reshape(store_shape)
        store[: batch[0]] = logical
        spec = [[0, batch[0]]] + [[0, d] for d in shape[1:]]
        return tensor(store, dtype, [{"op": "slice", "index": spec}])
    if kind == "transpose" and len(shape) >= 2:
        axes = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
        return tensor(np.transpose(logical, axes), dtype, [{"op": "transpose", "axes": axes}])
    if kind == "stride":
        store = BACKING_BASE + np.zeros(shape[:-1] + (2 * shape[-1],))
        store[..., ::2] = logical
        spec = [[0, d] for d in shape[:-1]] + [[0, 2 * shape[-1], 2]]
        return tensor(store, dtype, [{"op": "slice", "index": spec}])
    if kind == "broadcast" and batch and batch[0] > 1:
        one = logical[:1]
        return tensor(one, dtype, [{"op": "broadcast_to", "shape": list(shape)}])
    return tensor(logical, dtype)


def cotangent(draw, shape, dtype):
    mode = draw(choice(("ones", "random", "zero", "negative")))
    if mode == "ones":
        return None, mode
    if mode == "zero":
        return tensor(np.zeros(shape), dtype), mode
    vals = ints(shape, draw(irange(1, 2**16)))
    if mode == "negative":
        vals = -np.abs(vals) - 1
    return tensor(vals, dtype), mode


# --- gather_mm / gather_qmm: index arrays, sides, broadcasting ---------------

# Sizes above 1 drawn more often (1 shrinks first, and is where nothing can repeat).
DIMS = {2: choice((1, 2, 2)), 3: choice((1, 2, 3))}
ITEMS = {3: choice((1, 2, 3, 2, 3)), 4: choice((1, 2, 3, 4))}

# One index array (the only case where the sorted flag acts) twice as often.
SIDES = ("lhs", "rhs", "both", "none", "lhs", "rhs")


def index_plan(draw, max_dim=3):
    """Which index arrays are given, their shapes, and the sorted flag.

    Returns (side, sorted, out_batch, lhs_shape, rhs_shape); a missing array's
    shape is None. Index arrays of rank 0 to 3 are all accepted by MLX.
    """
    side = draw(choice(SIDES))
    srt = draw(choice((False, True, True)))   # the sorted path is where the defects live
    rank = draw(choice((1, 1, 2, 3) if side == "none" else (1, 1, 1, 1, 0, 2, 3)))
    out = tuple(draw(DIMS[max_dim]) for _ in range(rank))
    lhs = rhs = None
    if side in ("lhs", "both"):
        lhs = out if side == "lhs" else broadcast_variant(draw, out)
    if side in ("rhs", "both"):
        rhs = out if side == "rhs" else broadcast_variant(draw, out)
    return side, srt, out, lhs, rhs


def operand_batch(draw, idx_shape, other_shape, max_items=4):
    """Batch shape of one operand. With an index array it is any (E,) / (E1, E2);
    without one its default arange must broadcast against the other side."""
    if idx_shape is not None:
        return tuple(draw(ITEMS[max_items]) for _ in range(draw(irange(1, 2))))
    if other_shape is None:
        return None   # decided by the caller (side "none")
    return broadcast_variant(draw, other_shape)


def form(side, srt, a_batch, out_batch) -> str:
    """Call form used in signatures: which array is given, whether the sorted
    flag takes effect (exactly one array), and left broadcasting."""
    name = side + ("-sorted" if srt and side in ("lhs", "rhs") else "")
    if side == "rhs" and int(np.prod(a_batch, dtype=np.int64)) < int(np.prod(out_batch, dtype=np.int64)):
        name += "+bcast-left"
    return name


def _idx(draw, shape, bound, srt):
    return None if shape is None else index_tensor(index_values(draw, shape, bound, srt))


def _batches(draw, side, out, lhs, rhs, max_items=4):
    if side == "none":
        return broadcast_variant(draw, out), broadcast_variant(draw, out)
    return operand_batch(draw, lhs, rhs, max_items), operand_batch(draw, rhs, lhs, max_items)


def _out_batch(a_batch, b_batch, lhs, rhs):
    la = lhs.shape if lhs is not None else a_batch
    rb = rhs.shape if rhs is not None else b_batch
    return tuple(np.broadcast_shapes(tuple(la), tuple(rb)))


@st.composite
def gather_mm_case(draw, dtypes=("float32",)):
    dtype = draw(choice(dtypes))
    side, srt, out, lhs_shape, rhs_shape = index_plan(draw)
    a_batch, b_batch = _batches(draw, side, out, lhs_shape, rhs_shape)
    M, K, N = draw(DIM), draw(DIM), draw(DIM)
    lhs = _idx(draw, lhs_shape, int(np.prod(a_batch, dtype=np.int64)), srt)
    rhs = _idx(draw, rhs_shape, int(np.prod(b_batch, dtype=np.int64)), srt)
    seeds = draw(irange(0, 2**16)), draw(irange(0, 2**16))
    a = layout(draw, a_batch, (M, K), seeds[0], dtype)
    b = layout(draw, b_batch, (K, N), seeds[1], dtype)
    out_batch = _out_batch(a_batch, b_batch, lhs, rhs)
    cot, mode = cotangent(draw, out_batch + (M, N), dtype)
    wrt = draw(choice(tuple(nonempty_subsets(("a", "b")))))
    return finish(Scenario(
        name="", op="gather_mm", operands={"a": a, "b": b}, wrt=wrt, lhs_indices=lhs,
        rhs_indices=rhs, sorted_indices=srt, cotangent=cot,
        family=form(side, srt, a_batch, out_batch),
        description=f"generated: side {side}, cotangent {mode}"))


SCALES = (1.0, 0.5, 2.0, -1.0)


@st.composite
def gather_qmm_case(draw, dtypes=("float32",)):
    """Affine quantized weights with exact codes: W = code * scale + bias."""
    dtype = draw(choice(dtypes))
    # Half precision accumulates in its own width: keep |W| <= 2, |x| <= 1 and
    # K = 32 so every partial sum stays an integer below 256 (exact in bfloat16).
    half = dtype != "float32"
    # Draw the same choices whatever the dtype, so that the shrinker can move a
    # counterexample to float32 without reinterpreting the rest of the draws.
    bits, group, mult = draw(choice((4, 8))), draw(choice((32, 64, 128))), draw(irange(1, 2))
    group, mult = (32, 1) if half else (group, mult)
    K = group * mult
    M, N = draw(irange(1, 2)), draw(irange(1, 3))
    side, srt, out, lhs_shape, rhs_shape = index_plan(draw, max_dim=2)
    x_batch, w_batch = _batches(draw, side, out, lhs_shape, rhs_shape, max_items=3)
    lhs = _idx(draw, lhs_shape, int(np.prod(x_batch, dtype=np.int64)), srt)
    rhs = _idx(draw, rhs_shape, int(np.prod(w_batch, dtype=np.int64)), srt)
    seed = draw(irange(0, 2**16))
    small = dict(lo=-1, hi=2) if half else {}
    x = layout(draw, x_batch, (M, K), seed, dtype, **small)
    w_shape, g_shape = tuple(w_batch) + (N, K), tuple(w_batch) + (N, K // group)
    top = 2 if half else 1 << bits
    codes = ints(w_shape, seed + 2, 0, top).astype(np.int64) if seed else np.ones(w_shape, dtype=np.int64)
    pick = np.array(SCALES[:1] if half else SCALES)
    scales = pick[ints(g_shape, seed + 3, 0, len(pick)).astype(np.int64)] if seed else np.ones(g_shape)
    biases = ints(g_shape, seed + 1, **small)
    out_batch = _out_batch(x_batch, w_batch, lhs, rhs)
    cot, mode = cotangent(draw, out_batch + (M, N), dtype)
    wrt = draw(choice(tuple(nonempty_subsets(("x", "scales", "biases")))))
    return finish(Scenario(
        name="", op="gather_qmm",
        operands={"x": x, "codes": Tensor(tuple(int(v) for v in codes.ravel()), w_shape, "uint32"),
                  "scales": tensor(scales, dtype), "biases": tensor(biases, dtype)},
        wrt=wrt, lhs_indices=lhs, rhs_indices=rhs, sorted_indices=srt, cotangent=cot,
        params={"bits": bits, "group_size": group, "transpose": True, "mode": "affine"},
        family=form(side, srt, x_batch, out_batch),
        description=f"generated: side {side}, cotangent {mode}"))


STRATEGIES = {"gather_mm": gather_mm_case, "gather_qmm": gather_qmm_case}

# How often each target is drawn (the gather_mm family is where the known
# defects live; the rest are controls). Unknown registered targets get 1.
WEIGHTS = {"gather_mm": 10, "gather_qmm": 5}


def register(op: str, strategy, weight: int = 1) -> None:
    STRATEGIES[op] = strategy
    WEIGHTS.setdefault(op, weight)


def targets() -> list:
    from . import family_strategies  # noqa: F401  registers the gather family targets
    return list(STRATEGIES)


def dtype_table(dtypes) -> tuple:
    """float32 (exact arithmetic, the report's dtype) drawn as often as the rest together."""
    dtypes = tuple(dtypes)
    return dtypes if "float32" not in dtypes or len(dtypes) == 1 else \
        ("float32",) * (len(dtypes) - 1) + dtypes


def cases(ops, dtypes: dict):
    """One strategy over the chosen ops, weighted; shrinks towards the first op."""
    table = [op for op in ops for _ in range(WEIGHTS.get(op, 1))]
    built = {op: STRATEGIES[op](dtype_table(dtypes.get(op, ("float32",)))) for op in ops}

    @st.composite
    def one(draw):
        return draw(built[draw(st.sampled_from(table))])
    return one()
