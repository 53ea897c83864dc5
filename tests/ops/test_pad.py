"""pad: the reference against np.pad (forward, and the VJP through np.pad of an
index array), hand-computed gradients, semantic mutants (planted by
helpers/wrong_vjp.py) rejected by the catalog, and the pinned MLX verdicts: the
constant_values gradient is wrong (shape of a) with respect to c alone and kills
the process with respect to a and c."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops import pad as T

OP = "pad"


def _ref(a, mode, width, form="pairs", value=0, g=None, c=3.0):
    params = {"mode": mode, "width": width, "width_form": form, "value": value}
    inp = {"a": np.array(a, dtype=float), "c": np.array(c)}
    y = T.reference(inp, params)
    return y, None if g is None else T.reference_vjp(inp, np.array(g, dtype=float), params)


def test_gradients_by_hand():
    _, d = _ref([1, 2, 3], "edge", [[2, 1]], g=[1, 2, 3, 4, 5, 6])
    assert d["a"].tolist() == [6, 4, 11]                 # out = a0 a0 a0 a1 a2 a2
    _, d = _ref([1, 2, 3], "reflect", [[2, 2]], g=[1, 2, 3, 4, 5, 6, 7])
    assert d["a"].tolist() == [10, 12, 6]                # out = a2 a1 a0 a1 a2 a1 a0
    y, d = _ref([[1, 2]], "constant", [[1, 0], [0, 1]], value="operand", g=[[1, 2, 3], [4, 5, 6]])
    assert y.tolist() == [[3, 3, 3], [1, 2, 3]]
    assert d["a"].tolist() == [[4, 5]] and float(d["c"]) == 1 + 2 + 3 + 6
    _, d = _ref([[1, 2]], "constant", [[1, 0], [0, 1]], value=-2, g=[[1, 2, 3], [4, 5, 6]])
    assert float(d["c"]) == 0                           # a Python scalar: c plays no part


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_reference_agrees_with_numpy_pad(mode):
    """Forward against np.pad; VJP against np.pad applied to the flat positions of a."""
    rng = np.random.RandomState(1)
    for shape, width in (((3,), [[2, 5]]), ((2, 3), [[3, 1], [0, 4]]), ((1, 4), [[2, 2], [5, 1]]),
                         ((2, 2, 1), [[1, 0], [2, 3], [1, 1]])):
        a = rng.randint(-4, 5, size=shape).astype(float)
        kw = {"constant_values": 7.0} if mode == "constant" else {}
        y, _ = _ref(a, mode, width, value=7.0)
        assert y.tolist() == np.pad(a, width, mode=mode, **kw).tolist(), (mode, shape)
        where = np.pad(np.arange(a.size).reshape(shape), width, mode=mode,
                       **({"constant_values": -1} if mode == "constant" else {}))
        g = rng.randint(-4, 5, size=where.shape).astype(float)
        want = np.zeros(a.size)
        np.add.at(want, where[where >= 0], g[where >= 0])
        _, d = _ref(a, mode, width, g=g)
        assert d["a"].ravel().tolist() == want.tolist(), (mode, shape)


def test_width_forms_mean_what_mx_pad_says():
    assert T.widths({"width": 2, "width_form": "int"}, 2) == [(2, 2), (2, 2)]
    assert T.widths({"width": [3], "width_form": "single"}, 1) == [(3, 3)]
    assert T.widths({"width": [1, 4], "width_form": "pair"}, 2) == [(1, 4), (1, 4)]
    assert T.widths({"width": [[1, 0], [2, 3]], "width_form": "pairs"}, 2) == [(1, 0), (2, 3)]


# --- semantic mutants (float64 references under a wrong formula: c's MLX gradient crashes) ----

def _swap(params):
    w, form = params["width"], params["width_form"]
    if form == "pair":
        return [w[1], w[0]]
    return [[hi, lo] for lo, hi in w] if form == "pairs" else w


SWAPPED = {"reflect": "symmetric", "symmetric": "reflect"}
MUTANTS = {
    "every_mode_as_constant": lambda ctx: ctx.reference(mode="constant"),
    "low_high_swapped": lambda ctx: ctx.reference(width=_swap(ctx.params)),
    "reflect_symmetric_swapped": lambda ctx: ctx.reference(mode=SWAPPED.get(ctx.params["mode"], ctx.params["mode"])),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_semantic_mutants_are_rejected(name):
    assert W.caught(OP, MUTANTS[name], first_only=True), name


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_constant_value_scenario():
    got = {s.name: (W.honest(OP)[s.name], s.defect_tags) for s in W.scenarios(OP)}
    assert {n for n, (st, _) in got.items() if st != "pass"} == \
        {n for n, (_, tags) in got.items() if "constant_value_grad" in tags}


@needs_pinned_mlx()
def test_pinned_mlx_dies_differentiating_a_and_the_constant():
    script = textwrap.dedent("""
        import mlx.core as mx
        a, c = mx.array([[1.0, 2.0]]), mx.array(3.0)
        f = lambda a, c: mx.pad(a, [(1, 0), (0, 1)], constant_values=c)
        mx.eval(f(a, c))
        print("forward ok", flush=True)
        _, (da, dc) = mx.vjp(f, [a, c], [mx.ones((2, 3))])
        mx.eval(da, dc)
        print("vjp returned", dc.shape, flush=True)
    """)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert "forward ok" in p.stdout
    assert p.returncode < 0 and "vjp returned" not in p.stdout, (p.returncode, p.stdout, p.stderr[-300:])
