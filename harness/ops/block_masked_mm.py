"""block_masked_mm: mx.block_masked_mm(a, b, block_size, mask_out, mask_lhs, mask_rhs),
MLX's BlockMaskedMM primitive, with 0/1 block masks.

Each mask holds one entry per block_size x block_size tile of its matrix (the
last tile row and column may be partial). With E(mask) the mask expanded to
element level:  C = (a * E(mask_lhs)) @ (b * E(mask_rhs)),  y = C * E(mask_out).
The reverse rule: dC = g * E(mask_out); da = (dC @ (b * E_rhs)^T) * E_lhs and
db = ((a * E_lhs)^T @ dC) * E_rhs, each summed over the batch axes broadcasting
added. BlockMaskedMM::vjp builds these as further block-masked products with
the masks swapped between the out and operand roles and transposed, plus
padding to whole tiles: the role swap, the transposes and the partial tiles are
where it can go wrong.

The masks are integer operands (held fixed, converted to bool for MLX);
params["masks"] names the ones passed, the others are absent (all ones).
The MLX call is ops/repro/block_masked_mm.py.
"""
from __future__ import annotations

import numpy as np

from ..core import draw as D
from ..core.opinfo import KnownDefect, OpInfo
from ..core.scenario import Scenario
from ..core.tensors import hashed_ints, integer_tensor, seeded_ints, tensor
from ._support import expression as E

MASKS = ("mask_out", "mask_lhs", "mask_rhs")

# --- float64 reference -------------------------------------------------------------------


def expand(mask, bs, rows, cols) -> np.ndarray:
    """Element-level mask: E[..., i, j] = mask[..., i // bs, j // bs]."""
    mask = np.asarray(mask, dtype=np.float64)
    r, c = np.arange(rows) // bs, np.arange(cols) // bs
    return mask[..., r[:, None], c[None, :]]


def unbroadcast(d, shape) -> np.ndarray:
    """Sum d down to `shape` over the axes that broadcasting added or stretched."""
    d = d.sum(axis=tuple(range(d.ndim - len(shape)))) if d.ndim > len(shape) else d
    return d.sum(axis=tuple(i for i, n in enumerate(shape) if n == 1 and d.shape[i] != 1), keepdims=True)


def _setup(inp, params):
    """Operands as matrices (a 1-D a is one row, a 1-D b one column, as MLX does) and
    their element masks; an absent mask is all ones."""
    a, b = np.asarray(inp["a"], dtype=np.float64), np.asarray(inp["b"], dtype=np.float64)
    bs, used = int(params["block_size"]), set(params["masks"])
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    M, K, N = a2.shape[-2], a2.shape[-1], b2.shape[-1]

    def element(name, rows, cols, row_vec, col_vec):
        if name not in used:
            return np.ones((rows, cols))
        m = np.asarray(inp[name], dtype=np.float64)
        m = m[..., None, :] if row_vec else m
        m = m[..., None] if col_vec else m
        return expand(m, bs, rows, cols)
    E = {"out": element("mask_out", M, N, a.ndim == 1, b.ndim == 1),
         "lhs": element("mask_lhs", M, K, a.ndim == 1, False),
         "rhs": element("mask_rhs", K, N, False, b.ndim == 1)}
    return a, b, a2, b2, E


def _squeeze(y, a, b):
    if b.ndim == 1:
        y = y[..., 0]
    if a.ndim == 1:
        y = y[..., 0, :] if b.ndim > 1 else y[..., 0]
    return y


def reference(inp, params):
    a, b, a2, b2, E = _setup(inp, params)
    y = np.matmul(a2 * E["lhs"], b2 * E["rhs"]) * E["out"]
    return _squeeze(y, a, b)


def reference_vjp(inp, g, params):
    a, b, a2, b2, E = _setup(inp, params)
    g = np.asarray(g, dtype=np.float64)
    g = g[..., None] if b.ndim == 1 else g
    g = g[..., None, :] if a.ndim == 1 else g
    dc = g * E["out"]
    da = np.matmul(dc, np.swapaxes(b2 * E["rhs"], -1, -2)) * E["lhs"]
    db = np.matmul(np.swapaxes(a2 * E["lhs"], -1, -2), dc) * E["rhs"]
    return {"a": unbroadcast(da, a2.shape).reshape(a.shape), "b": unbroadcast(db, b2.shape).reshape(b.shape)}


# --- catalog -------------------------------------------------------------------------------

# Defect class: an operand broadcast over the batch (stride 0) whose tile mask differs
# between batch items. The CPU kernel copies the operand without expanding the broadcast
# and zeroes masked tiles in place, so one item's mask leaks into the others.
SHARED_MASKED = "broadcast_operand_mask"

COMBOS = (("mask_out",), ("mask_lhs", "mask_rhs"), ("mask_out", "mask_lhs", "mask_rhs"),
          ("mask_lhs",), ("mask_rhs",), ("mask_out", "mask_rhs"))


def tiles(n, bs) -> int:
    return -(-n // bs)


def mask_tensor(shape, seed, fill=None):
    """0/1 tile mask; seeded so that it has both values once it has two tiles."""
    if fill is not None:
        return integer_tensor(np.full(shape, fill, dtype=np.int64))
    m = np.random.RandomState(seed).randint(0, 2, size=shape)
    if m.size > 1 and m.min() == m.max():
        m.reshape(-1)[0] = 1 - m.reshape(-1)[0]
    return integer_tensor(m)


def bmm(name, a, b, bs, used, batch=(), wrt=("a", "b"), seed=0, fills=None, cot=None, fd=False,
        tags=(), desc="", shapes=None) -> Scenario:
    """Mask shapes follow a, b (batch + tile grid) unless `shapes` overrides them."""
    M, K = (1, a.shape[-1]) if len(a.shape) == 1 else a.shape[-2:]
    N = b.shape[-1] if len(b.shape) > 1 else 1
    grid = {"mask_out": (tiles(M, bs), tiles(N, bs)), "mask_lhs": (tiles(M, bs), tiles(K, bs)),
            "mask_rhs": (tiles(K, bs), tiles(N, bs))}
    shapes = dict({n: tuple(batch) + grid[n] for n in MASKS}, **(shapes or {}))
    fills = fills or {}
    masks = {n: mask_tensor(shapes[n], seed + i, fills.get(n)) for i, n in enumerate(MASKS)}
    return Scenario(name=f"block_masked_mm/{name}", op="block_masked_mm",
                    operands={"a": a, "b": b, **masks}, wrt=tuple(wrt), cotangent=cot,
                    params={"block_size": bs, "masks": list(used)}, fd_step=1.0 / 16 if fd else None,
                    family="block_masked", defect_tags=tuple(tags), description=desc)


def _ints(shape, seed):
    return tensor(seeded_ints(shape, seed))


def _combos() -> list:
    out = []
    for bs, (M, K, N) in ((32, (40, 70, 33)), (64, (65, 20, 130))):
        a, b = _ints((M, K), 200 + bs), _ints((K, N), 201 + bs)
        cot = _ints((M, N), 202 + bs)
        for i, used in enumerate(COMBOS):
            label = "+".join(n[5:] for n in used)
            out.append(bmm(f"bs{bs}/{label}", a, b, bs, used, seed=10 * i + bs, cot=cot,
                           desc="partial last tiles on every axis"))
    return out


def _shapes() -> list:
    allm = list(MASKS)
    return [
        bmm("batched/per_item_masks", _ints((2, 40, 36), 210), _ints((2, 36, 33), 211), 32, allm,
            batch=(2,), seed=5, desc="each batch item has its own masks"),
        bmm("broadcast_a/out_mask", _ints((40, 36), 212), _ints((2, 36, 33), 213), 32, ["mask_out"],
            batch=(2,), seed=6, desc="a shared by both batch items: da sums over the batch"),
        bmm("broadcast_a/shared_operand_masks", _ints((40, 36), 212), _ints((2, 36, 33), 213), 32, allm,
            batch=(2,), seed=6, shapes={"mask_lhs": (2, 2), "mask_rhs": (2, 2)},
            desc="a shared, operand masks shared too: the control for the class below"),
        bmm(f"{SHARED_MASKED}/a", _ints((40, 36), 212), _ints((2, 36, 33), 213), 32, allm, batch=(2,),
            seed=6, tags=(SHARED_MASKED,), desc="a shared by both batch items, its mask differs per item"),
        bmm(f"{SHARED_MASKED}/b", _ints((2, 40, 36), 232), _ints((36, 33), 233), 32, ["mask_rhs"],
            batch=(2,), seed=14, tags=(SHARED_MASKED,),
            desc="b shared by both batch items, its mask differs per item"),
        bmm("broadcast_mask", _ints((2, 40, 36), 214), _ints((2, 36, 33), 215), 32, allm, seed=7,
            shapes={"mask_out": (1, 2, 2)}, desc="an out mask of batch 1 broadcast over batch 2"),
        bmm("exact_tiles", _ints((64, 32), 216), _ints((32, 64), 217), 32, allm, seed=8,
            desc="every axis a whole number of tiles (no padding)"),
        bmm("transposed_a", tensor(seeded_ints((36, 40), 218), views=[{"op": "transpose", "axes": [1, 0]}]),
            _ints((36, 33), 219), 32, allm, seed=9, desc="a a transposed view"),
        bmm("vector_a", _ints((36,), 220), _ints((36, 33), 221), 32, allm, seed=10,
            shapes={"mask_out": (2,), "mask_lhs": (2,)}, desc="1-D a: masks lose the row-tile axis"),
        bmm("out_all_zero", _ints((40, 36), 222), _ints((36, 33), 223), 32, ["mask_out"],
            fills={"mask_out": 0}, desc="every output tile masked: both gradients exactly zero"),
        bmm("wrt_a/lhs+rhs", _ints((40, 36), 224), _ints((36, 33), 225), 32, ["mask_lhs", "mask_rhs"],
            wrt=("a",), seed=11),
        bmm("wrt_b/out+lhs+rhs", _ints((40, 36), 226), _ints((36, 33), 227), 32, allm, wrt=("b",), seed=12),
        bmm("no_masks", _ints((3, 4), 228), _ints((4, 2), 229), 32, [], fd=True,
            desc="no mask at all: a plain matmul"),
        bmm("small/fd", _ints((3, 34), 230), _ints((34, 2), 231), 32, allm, seed=13, fd=True,
            fills={"mask_lhs": 1}, shapes={"mask_rhs": (2, 1)}, desc="finite differences through MLX"),
    ]


def scenarios() -> list:
    return _combos() + _shapes()


# --- fuzz strategy -------------------------------------------------------------------------

def _dim(draw, bs) -> int:
    """Around tile boundaries; shrinks towards one partial tile."""
    return draw(D.choice((3, bs, bs + 1, bs - 1, 2 * bs + 3, 1)))


def _mask(draw, shape):
    kind = draw(D.choice(("random", "ones", "zeros")))
    if kind == "ones":
        return np.ones(shape, dtype=np.int64), kind
    if kind == "zeros":
        return np.zeros(shape, dtype=np.int64), kind
    return hashed_ints(shape, draw(D.irange(1, 2**16)), 0, 2).astype(np.int64), kind


def fuzz_case(draw, dtypes=("float32",)) -> Scenario:
    dtype = draw(D.choice(dtypes))
    bs = draw(D.choice((32, 64)))
    M, K, N = _dim(draw, bs), _dim(draw, bs), _dim(draw, bs)
    batch = tuple(draw(D.irange(1, 2)) for _ in range(draw(D.irange(0, 2))))
    a_batch, b_batch = (D.broadcast_variant(draw, batch) for _ in range(2))
    batch = tuple(np.broadcast_shapes(a_batch, b_batch))   # masks broadcast to this, never beyond
    seed = draw(D.irange(0, 2**16))
    a = D.layout(draw, a_batch, (M, K), seed, dtype)
    b = D.layout(draw, b_batch, (K, N), seed + 1, dtype)
    used = draw(D.choice(COMBOS + ((),)))
    grid = {"mask_out": (M, N), "mask_lhs": (M, K), "mask_rhs": (K, N)}
    masks, kinds = {}, []
    for name in MASKS:
        shape = D.broadcast_variant(draw, batch) + tuple(tiles(d, bs) for d in grid[name])
        m, kind = _mask(draw, shape) if name in used else (np.ones(shape, dtype=np.int64), "absent")
        masks[name] = integer_tensor(m)
        kinds.append(kind)
    cot, mode = D.cotangent(draw, batch + (M, N), dtype)
    wrt = draw(D.choice(tuple(D.nonempty_subsets(("a", "b")))))
    return D.finish(Scenario(
        name="", op="block_masked_mm", operands={"a": a, "b": b, **masks}, wrt=wrt, cotangent=cot,
        params={"block_size": bs, "masks": list(used)}, family="block_masked",
        description=f"generated: M K N {M} {K} {N}, block {bs}, masks {'/'.join(kinds)}, cotangent {mode}"))


def call_expression(params, names) -> str:
    """The one block_masked_mm call: the masks params["masks"] names as boolean arrays (the others
    left at MLX's default, None, as the call file passes them)."""
    masks = {n: f"mx.array({names[n]} != 0)" for n in MASKS if n in params["masks"]}
    return E.call("mx.block_masked_mm", names["a"], names["b"], block_size=E.lit(params["block_size"]), **masks)


OPS = (OpInfo(
    name="block_masked_mm", known_defects=(KnownDefect(SHARED_MASKED),),
    summary="mx.block_masked_mm (BlockMaskedMM): out and operand tile masks, block 32 / 64",
    operands=("a", "b") + MASKS, differentiable=("a", "b"), integer_operands=MASKS,
    reference=reference, reference_vjp=reference_vjp, exact=True, multilinear=True,
    rule="E(m): tile mask m at element level; y = ((a E_lhs) @ (b E_rhs)) E_out; dC = g E_out; "
         "da = (dC (b E_rhs)^T) E_lhs, db = ((a E_lhs)^T dC) E_rhs, summed over broadcast batch axes",
    mlx_call=".ops.repro.block_masked_mm:mlx_call", call_expression=call_expression,
    # MLX 0.32.4 on the CPU: BlockMaskedMM is float32-only and has no vmap; no masks is a plain Matmul.
    primitives=("BlockMaskedMM", "Matmul", "Broadcast", "ExpandDims", "Squeeze"), dtypes=("float32",), complex=False,
    vmap=False,
    scenarios=scenarios, strategy=fuzz_case),)
