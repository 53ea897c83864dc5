"""The mx.fast ops: rms_norm, layer_norm, rope and sdpa (harness/ops/<name>.py).

* each float64 reference against small examples worked out by hand, and the
  hand-written reference VJPs against float64 differences of the forwards;
* op-specific wrong VJPs (a flag ignored, a term missing, an axis not summed,
  the wrong alignment) plugged in through mx.custom_function: each must be
  rejected by the catalog scenarios written for it, while the same wrapper
  around the true VJP passes every scenario;
* on the pinned MLX, every catalog scenario of the four ops passes on CPU.

The modules are registered through $MLX_VJPCHECK_PLUGINS unless ops.MODULES
already lists them, so the tests pass before and after they are integrated.
"""
from __future__ import annotations

import dataclasses
import math
import os

import numpy as np
import pytest

import conftest
from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog, expected
from mlx_vjpcheck.core import numeric, opinfo
from mlx_vjpcheck.running import devices, execute

FAST = ("rms_norm", "layer_norm", "rope", "sdpa")


@pytest.fixture(autouse=True)
def fast_ops(monkeypatch):
    """The four modules as plugins where ops.MODULES does not list them (never both:
    the registry refuses an op declared twice)."""
    built_in = {f"mlx_vjpcheck.ops.{m}" for m in ops.MODULES}
    current = [m.strip() for m in os.environ.get(ops.PLUGINS_ENV, "").split(",") if m.strip()]
    wanted = current + [f"mlx_vjpcheck.ops.{m}" for m in FAST]
    monkeypatch.setenv(ops.PLUGINS_ENV, ",".join(m for m in dict.fromkeys(wanted) if m not in built_in))
    monkeypatch.setattr(ops, "_REGISTRY", {})


def _module(op):
    import importlib
    return importlib.import_module(f"mlx_vjpcheck.ops.{op}")


def _scenarios(op):
    return [s for s in catalog.catalog() if s.op == op]


# --- references against hand-worked examples -------------------------------------------------

def test_rms_norm_by_hand():
    m = _module("rms_norm")
    inp = {"x": np.array([[2.0, -2.0]]), "weight": np.array([1.0, 3.0])}
    p = {"eps": 0.0, "weight": True}
    # mean of squares 4, r = 1/2: y = x / 2 * w
    assert np.allclose(m.reference(inp, None, None, p), [[1.0, -3.0]])
    assert np.allclose(m.reference(inp, None, None, dict(p, weight=False)), [[1.0, -1.0]])
    # dy0/dx0 = r - x0^2 r^3 / 2 = 1/4, dy0/dx1 = -x0 x1 r^3 / 2 = 1/4; dw = g x r
    g = m.reference_vjp(inp, np.array([[1.0, 0.0]]), None, None, p)
    assert np.allclose(g["x"], [[0.25, 0.25]]) and np.allclose(g["weight"], [1.0, 0.0])
    # a zero row: r = eps^-1/2 = 2 and only g w r is left
    zero = {"x": np.zeros((1, 2)), "weight": np.array([1.0, 3.0])}
    g = m.reference_vjp(zero, np.array([[1.0, 1.0]]), None, None, {"eps": 0.25, "weight": True})
    assert np.allclose(g["x"], [[2.0, 6.0]]) and np.allclose(g["weight"], 0.0)


def test_layer_norm_by_hand():
    m = _module("layer_norm")
    inp = {"x": np.array([[1.0, 3.0]]), "weight": np.array([2.0, 3.0]), "bias": np.array([1.0, 1.0])}
    p = {"eps": 0.0, "weight": True, "bias": True}
    # mean 2, variance 1: xhat = (-1, 1)
    assert np.allclose(m.reference(inp, None, None, p), [[-1.0, 4.0]])
    assert np.allclose(m.reference(inp, None, None, dict(p, weight=False, bias=False)), [[-1.0, 1.0]])
    # two features normalise to +-1 whatever x is: dx = 0; dw = g xhat, db = g
    g = m.reference_vjp(inp, np.array([[1.0, 0.0]]), None, None, p)
    assert np.allclose(g["x"], 0.0)
    assert np.allclose(g["weight"], [-1.0, 0.0]) and np.allclose(g["bias"], [1.0, 0.0])
    # a constant row: xhat = 0, r = eps^-1/2 = 2, dx = r (g w - mean(g w)) = 2 ((2, 0) - 1)
    const = dict(inp, x=np.array([[5.0, 5.0]]))
    g = m.reference_vjp(const, np.array([[1.0, 0.0]]), None, None, dict(p, eps=0.25))
    assert np.allclose(g["x"], [[2.0, -2.0]]) and np.allclose(g["weight"], 0.0)


def _rope_params(dims, traditional, scale=1.0):
    return {"dims": dims, "traditional": traditional, "base": None, "scale": scale, "offset_form": "int"}


def test_rope_by_hand():
    m = _module("rope")
    x = np.array([0.0, 0, 0, 0, 1, 2, 3, 4]).reshape(1, 1, 2, 4)   # positions 0 and 1
    inp = {"x": x, "freqs": np.array([2 / math.pi, 1 / math.pi]), "offset": np.array(0)}
    # position 1 turns pair 0 by pi/2 ((a, c) -> (-c, a)) and pair 1 by pi ((a, c) -> (-a, -c))
    halves = m.reference(inp, None, None, _rope_params(4, False))   # pairs (0, 2), (1, 3)
    assert np.allclose(halves[0, 0, 1], [-3.0, -2.0, 1.0, -4.0]) and np.allclose(halves[0, 0, 0], 0.0)
    trad = m.reference(inp, None, None, _rope_params(4, True))      # pairs (0, 1), (2, 3)
    assert np.allclose(trad[0, 0, 1], [-2.0, 1.0, -3.0, -4.0])
    part = m.reference(dict(inp, freqs=np.array([2 / math.pi])), None, None, _rope_params(2, False))
    assert np.allclose(part[0, 0, 1], [-2.0, 1.0, 3.0, 4.0])        # features 2, 3 pass through
    # offset 1 and scale 1/2: position 1 sits at (1 + 1) / 2 = 1 as before
    shifted = m.reference(dict(inp, offset=np.array(1)), None, None, _rope_params(4, False, 0.5))
    assert np.allclose(shifted[0, 0, 1], halves[0, 0, 1])


@pytest.mark.parametrize("traditional", [False, True])
def test_rope_vjp_is_the_transpose_of_the_forward(traditional):
    """The op is linear in x: its Jacobian's columns are the forward of unit vectors."""
    m = _module("rope")
    shape = (2, 1, 3, 6)
    inp = {"x": np.zeros(shape), "freqs": np.array([1.0]), "offset": np.array([1, -2])}
    p = {"dims": 4, "traditional": traditional, "base": 10.0, "scale": 0.5, "offset_form": "vector"}
    cols = []
    for i in range(int(np.prod(shape))):
        e = np.zeros(int(np.prod(shape)))
        e[i] = 1.0
        cols.append(m.reference(dict(inp, x=e.reshape(shape)), None, None, p).ravel())
    jac = np.array(cols).T
    g = np.random.RandomState(0).randn(*shape)
    assert np.allclose(m.reference_vjp(inp, g, None, None, p)["x"].ravel(), jac.T @ g.ravel())


def _sdpa(q, k, v, mask_kind="none", mask=None, scale=1.0, g=None):
    """(forward, {q, k, v gradients}) of the sdpa reference, as the harness computes them."""
    info = ops.get("sdpa")
    inp = {"q": np.array(q, dtype=float), "k": np.array(k, dtype=float), "v": np.array(v, dtype=float),
           "mask": np.array([0.0] if mask is None else mask, dtype=float)}
    p = {"scale": scale, "mask": mask_kind}
    y = info.reference(inp, None, None, p)
    g = np.ones_like(y) if g is None else np.array(g, dtype=float)
    grads = expected.reference_vjp(info, inp, g, None, None, p, ("q", "k", "v"))
    return y, grads


LN3 = math.log(3.0)


def test_sdpa_by_hand():
    q, k, v = [[[[1.0]]]], [[[[0.0], [LN3]]]], [[[[4.0], [8.0]]]]
    # scores (0, ln 3): P = (1/4, 3/4), out = 7; dP = v g = (4, 8), dS = P (dP - 7) = (-3/4, 3/4)
    y, gr = _sdpa(q, k, v)
    assert np.allclose(y, 7.0)
    assert np.allclose(gr["v"].ravel(), [0.25, 0.75])
    assert np.allclose(gr["q"].ravel(), [0.75 * LN3]) and np.allclose(gr["k"].ravel(), [-0.75, 0.75])
    # a boolean mask hiding key 1: out = v0, no dependence on q or k
    y, gr = _sdpa(q, k, v, "bool", [[1.0, 0.0]])
    assert np.allclose(y, 4.0) and np.allclose(gr["q"], 0) and np.allclose(gr["v"].ravel(), [1.0, 0.0])
    # hiding every key: MLX's convention, uniform weights
    y, gr = _sdpa(q, k, v, "bool", [[0.0, 0.0]])
    assert np.allclose(y, 6.0) and np.allclose(gr["k"], 0) and np.allclose(gr["v"].ravel(), [0.5, 0.5])
    # causal is lower-right aligned: one query with two keys sees both (upper-left would see one)
    assert np.allclose(_sdpa(q, k, v, "causal")[0], 7.0)
    # an additive mask (0, ln 3) on equal scores gives the same weights
    assert np.allclose(_sdpa(q, [[[[0.0], [0.0]]]], v, "additive", [[0.0, LN3]])[0], 7.0)


def test_sdpa_grouped_heads_by_hand():
    """Two query heads on one key/value head: dk and dv add both heads' terms."""
    q = [[[[1.0]], [[-1.0]]]]                       # heads 0, 1; one query each
    y, gr = _sdpa(q, [[[[0.0], [LN3]]]], [[[[4.0], [8.0]]]], g=[[[[1.0]], [[2.0]]]])
    # head 1: scores (0, -ln 3), P = (3/4, 1/4), out 5; dS = P (dP - 10) with dP = (8, 16)
    assert np.allclose(y.ravel(), [7.0, 5.0])
    assert np.allclose(gr["v"].ravel(), [0.25 + 1.5, 0.75 + 0.5])
    assert np.allclose(gr["k"].ravel(), [-0.75 + 1.5, 0.75 - 1.5])
    assert np.allclose(gr["q"].ravel(), [0.75 * LN3, 1.5 * LN3])   # dq = dS . k


@pytest.mark.parametrize("op", ["rms_norm", "layer_norm", "rope"])
def test_hand_written_vjp_agrees_with_float64_differences(op):
    """Where differences can decide (not rows whose scale is sqrt(eps)), they agree
    with the hand-written reference VJP to the stated bound."""
    info, decided = ops.get(op), 0
    for s in _scenarios(op):
        inp, g = expected.logical_inputs(s), None
        y = info.reference(inp, None, None, s.params)
        g = expected.cotangent(s, y)
        try:
            num = numeric.vjp_by_differences(lambda x: info.reference(x, None, None, s.params), inp, g, s.wrt)
        except numeric.ReferenceUndecided:
            continue
        hand = info.reference_vjp(inp, g, None, None, s.params)
        for n in s.wrt:
            assert np.allclose(hand[n], num[n], rtol=0, atol=1e-7 * (1 + np.abs(num[n]).max())), (s.name, n)
        decided += 1
    assert decided >= len(_scenarios(op)) - 2


# --- wrong VJPs through mx.custom_function ----------------------------------------------------

@dataclasses.dataclass
class Ctx:
    """What a mutant backward sees: the true call, its operands, the cotangent."""
    call: object
    env: dict
    names: list
    cot: object
    params: dict

    def true(self, cot=None, **params) -> dict:
        """The true VJP, optionally of the call with other params or cotangent."""
        import mlx.core as mx
        p = dict(self.params, **params)

        def f(*xs):
            return self.call(dict(self.env, **dict(zip(self.names, xs))), None, None, False, p)
        _, grads = mx.vjp(f, [self.env[n] for n in self.names], [self.cot if cot is None else cot])
        return dict(zip(self.names, grads))

    def with_env(self, **env) -> "Ctx":
        return dataclasses.replace(self, env=dict(self.env, **env))


def _wrapped(call_path, backward):
    call = opinfo.resolve(call_path)

    def mutated(ops_, lhs, rhs, sorted_indices, params):
        import mlx.core as mx
        names = [n for n, v in ops_.items()
                 if isinstance(v, mx.array) and mx.issubdtype(v.dtype, mx.floating)]

        def inner(*xs):
            return call(dict(ops_, **dict(zip(names, xs))), lhs, rhs, sorted_indices, params)
        f = mx.custom_function(inner)

        @f.vjp
        def f_vjp(primals, cotangent, output):
            prim = list(primals) if isinstance(primals, (list, tuple)) else [primals]
            ctx = Ctx(call, dict(ops_, **dict(zip(names, prim))), names, cotangent, params)
            grads = backward(ctx)
            out = [grads.get(n, mx.zeros_like(x)) for n, x in zip(names, prim)]
            return out[0] if len(out) == 1 else tuple(out)
        return f(*[ops_[n] for n in names])
    return mutated


_current_call = None   # resolve() imports "test_op_fast:_current_call"


def _install(monkeypatch, op, backward):
    global _current_call
    info = ops.get(op)
    _current_call = _wrapped(info.mlx_call, backward)
    monkeypatch.setitem(ops.registry(), op, dataclasses.replace(info, mlx_call="test_op_fast:_current_call"))


def _mx():
    import mlx.core as mx
    return mx


def _row_stats(c, centred):
    mx, x, p = _mx(), c.env["x"], c.params
    xc = x - mx.mean(x, axis=-1, keepdims=True) if centred else x
    r = mx.rsqrt(mx.mean(xc * xc, axis=-1, keepdims=True) + p["eps"])
    gw = c.cot * c.env["weight"] if p["weight"] else c.cot
    return xc, r, gw


def rms_r_constant(c):
    _, r, gw = _row_stats(c, False)
    return dict(c.true(), x=gw * r)                    # r treated as a constant


def rms_weight_grad_last_row(c):
    _, r, _ = _row_stats(c, False)
    rows = (c.cot * c.env["x"] * r).reshape(-1, c.env["x"].shape[-1])
    return dict(c.true(), weight=rows[-1])             # assigned per row, not summed


def rms_eps_dropped(c):
    return c.true(eps=0.0)


def norm_weight_ignored_in_dx(c):
    return dict(c.true(), x=c.true(weight=False)["x"])


def ln_mean_term_dropped(c):
    mx = _mx()
    xc, r, gw = _row_stats(c, True)
    xhat = xc * r
    return dict(c.true(), x=r * (gw - xhat * mx.mean(gw * xhat, axis=-1, keepdims=True)))


def ln_variance_term_dropped(c):
    mx = _mx()
    _, r, gw = _row_stats(c, True)
    return dict(c.true(), x=r * (gw - mx.mean(gw, axis=-1, keepdims=True)))


def ln_bias_grad_mean(c):
    mx = _mx()
    rows = c.cot.reshape(-1, c.cot.shape[-1])
    return dict(c.true(), bias=mx.mean(rows, axis=0))


def rope_forward_rotation(c):
    return {"x": c.call(dict(c.env, x=c.cot), None, None, False, c.params)}   # `forward` not flipped


def rope_offset_ignored(c):
    return c.with_env(offset=np.zeros_like(c.env["offset"])).true()


def rope_first_offset_for_all(c):
    return c.with_env(offset=np.full_like(c.env["offset"], np.ravel(c.env["offset"])[0])).true()


def rope_pairing_flipped(c):
    return c.true(traditional=not c.params["traditional"])


def rope_scale_ignored(c):
    return c.true(scale=1.0)


def rope_freqs_ignored(c):
    return c.true(base=10000.0)


def rope_tail_dropped(c):
    mx = _mx()
    dx = c.true()["x"]
    keep = mx.array((np.arange(dx.shape[-1]) < c.params["dims"]).astype(np.float32))
    return {"x": dx * keep}


def sdpa_mask_ignored(c):
    return c.true(mask="none")


def sdpa_causal_upper_left(c):
    Tq, Tk = c.env["q"].shape[2], c.env["k"].shape[2]
    tril = _mx().array(np.tril(np.ones((Tq, Tk), dtype=np.float32)))
    return c.with_env(mask=tril).true(mask="bool") if c.params["mask"] == "causal" else c.true()


def sdpa_group_first_head_only(c):
    mx = _mx()
    reps = c.env["q"].shape[1] // c.env["k"].shape[1]
    first = mx.array((np.arange(c.env["q"].shape[1]) % reps == 0).astype(np.float32)).reshape(1, -1, 1, 1)
    wrong = c.true(cot=c.cot * first)
    return dict(c.true(), k=wrong["k"], v=wrong["v"])


def sdpa_scale_missing_in_dk(c):
    grads = c.true()
    return dict(grads, k=grads["k"] / c.params["scale"])


def _attention(mx, env, params, softmax, hidden=float(np.finfo(np.float32).min)):
    """MLX's fallback composition, with the softmax and the hidden-score value supplied."""
    q, k, v, mask, kind = env["q"], env["k"], env["v"], env["mask"], params["mask"]
    reps = q.shape[1] // k.shape[1]
    s = params["scale"] * (q @ mx.swapaxes(mx.repeat(k, reps, axis=1), -1, -2))
    Tq, Tk = s.shape[-2:]
    if kind == "additive":
        s = s + mask
    if kind in ("causal", "bool"):
        lower_right = np.arange(Tk)[None] <= np.arange(Tq)[:, None] + Tk - Tq
        seen = mx.array(lower_right) if kind == "causal" else mask != 0
        s = mx.where(seen, s, mx.array(hidden, dtype=mx.float32))
    return softmax(s) @ mx.repeat(v, reps, axis=1)


def _softmax_with(centred):
    mx = _mx()
    f = mx.custom_function(lambda s: mx.softmax(s, axis=-1, precise=True))

    @f.vjp
    def f_vjp(s, g, p):
        return p * (g - mx.sum(p * g, axis=-1, keepdims=True)) if centred else p * g
    return f


def _sdpa_composed(centred, hidden=float(np.finfo(np.float32).min)):
    def backward(c):
        mx = _mx()
        names = ("q", "k", "v")

        def f(*xs):
            env = dict(c.env, **dict(zip(names, xs)))
            return _attention(mx, env, c.params, _softmax_with(centred), hidden)
        _, grads = mx.vjp(f, [c.env[n] for n in names], [c.cot])
        return dict(zip(names, grads))
    return backward


sdpa_softmax_not_centred = _sdpa_composed(False)
sdpa_hidden_scores_minus_inf = _sdpa_composed(True, -math.inf)   # rows that see nothing: NaN


def sdpa_bool_mask_added(c):
    return c.true(mask="additive")                     # the 0/1 mask added to the scores


def ln_weight_bias_swapped(c):
    grads = c.true()
    return dict(grads, weight=grads["bias"], bias=grads["weight"])


# op, mutant, catalog scenarios that must each reject it
MUTANTS = [
    ("rms_norm", rms_r_constant, ["rms_norm/weight/x", "rms_norm/no_weight"]),
    ("rms_norm", rms_weight_grad_last_row, ["rms_norm/weight/weight", "rms_norm/rank3"]),
    ("rms_norm", rms_eps_dropped, ["rms_norm/zero_row", "rms_norm/eps_half"]),
    ("rms_norm", norm_weight_ignored_in_dx, ["rms_norm/weight/x"]),
    ("layer_norm", ln_mean_term_dropped, ["layer_norm/single/x", "layer_norm/constant_row"]),
    ("layer_norm", ln_variance_term_dropped, ["layer_norm/single/x", "layer_norm/no_weight/no_bias"]),
    ("layer_norm", ln_bias_grad_mean, ["layer_norm/single/bias", "layer_norm/rank3"]),
    ("layer_norm", norm_weight_ignored_in_dx, ["layer_norm/single/x", "layer_norm/weight/no_bias"]),
    ("layer_norm", ln_weight_bias_swapped, ["layer_norm/weight/bias", "layer_norm/rank3"]),
    ("rope", rope_forward_rotation, ["rope/halves/base", "rope/traditional/base"]),
    ("rope", rope_offset_ignored, ["rope/halves/base", "rope/offset_array_scalar"]),
    ("rope", rope_first_offset_for_all, ["rope/halves/offset_vector", "rope/rank5"]),
    ("rope", rope_pairing_flipped, ["rope/halves/base", "rope/traditional/freqs"]),
    ("rope", rope_scale_ignored, ["rope/scale_half"]),
    ("rope", rope_freqs_ignored, ["rope/halves/freqs", "rope/partial_freqs"]),
    ("rope", rope_tail_dropped, ["rope/halves/partial_dims", "rope/traditional/partial_dims"]),
    ("sdpa", sdpa_mask_ignored, ["sdpa/causal/square", "sdpa/additive/full", "sdpa/bool/broadcast_rows"]),
    ("sdpa", sdpa_causal_upper_left, ["sdpa/causal/fewer_queries", "sdpa/causal/more_queries"]),
    ("sdpa", sdpa_group_first_head_only, ["sdpa/gqa/plain", "sdpa/gqa/k_only", "sdpa/mqa"]),
    ("sdpa", sdpa_scale_missing_in_dk, ["sdpa/single/k", "sdpa/gqa/k_only"]),
    ("sdpa", sdpa_softmax_not_centred, ["sdpa/single/q", "sdpa/plain/ones_cotangent"]),
    ("sdpa", sdpa_hidden_scores_minus_inf, ["sdpa/causal/more_queries", "sdpa/bool/broadcast_rows"]),
    ("sdpa", sdpa_bool_mask_added, ["sdpa/bool/broadcast_rows", "sdpa/gqa/bool_per_head"]),
]


def _status(s):
    return execute.run(s, "cpu")["status"]


@pytest.mark.parametrize("op, mutant, catchers", MUTANTS, ids=[f"{o}-{m.__name__}" for o, m, _ in MUTANTS])
def test_a_wrong_vjp_is_rejected_by_its_scenarios(op, mutant, catchers, monkeypatch):
    devices.select("cpu")
    by_name = {s.name: s for s in _scenarios(op)}
    assert set(catchers) <= set(by_name), sorted(set(catchers) - set(by_name))
    honest = {n: _status(by_name[n]) for n in catchers}
    assert all(v == "pass" for v in honest.values()), honest
    _install(monkeypatch, op, mutant)
    verdicts = {n: _status(by_name[n]) for n in catchers}
    assert all(v == "fail" for v in verdicts.values()), verdicts


IDENTITY = {"rms_norm": lambda c: c.true(), "layer_norm": lambda c: c.true(),
            "rope": lambda c: c.true(), "sdpa": _sdpa_composed(True)}


@pytest.mark.parametrize("op", FAST)
def test_the_wrapper_around_a_true_vjp_passes_every_scenario(op, monkeypatch):
    """Control for the mutants: the same machinery with a correct backward (for
    sdpa, the composed attention with a correct softmax VJP) changes no verdict."""
    devices.select("cpu")
    scenarios = _scenarios(op)
    honest = [_status(s) for s in scenarios]
    _install(monkeypatch, op, IDENTITY[op])
    assert [_status(s) for s in scenarios] == honest


@conftest.needs_pinned_mlx()
@pytest.mark.parametrize("op", FAST)
def test_every_catalog_scenario_passes_on_the_pinned_mlx_cpu(op):
    """No defect in these ops' CPU gradients on MLX 0.32.4: no scenario is tagged, all pass."""
    devices.select("cpu")
    scenarios = _scenarios(op)
    assert scenarios and not any(s.defect_tags for s in scenarios)
    assert {s.name: _status(s) for s in scenarios} == {s.name: "pass" for s in scenarios}
