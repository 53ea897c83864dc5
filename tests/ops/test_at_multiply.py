"""at_multiply (a.at[key].multiply / divide with int and slice keys, SliceUpdate
Prod): hand-computed reference, the product rule with repeated writes, semantic
mutants (planted by helpers/wrong_vjp.py) rejected by the catalog, and the pinned
MLX facts: a clean catalog, and no VJP at all for index-array keys (Scatter Prod,
the record at_multiply_indexed)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import wrong_vjp as W
from mlx_vjpcheck.ops import at_multiply as T
from mlx_vjpcheck.ops._support import scatter as S

OP = "at_multiply"


def _ref(params, a, v, g, **indices):
    inp = {"a": np.array(a, dtype=float), "v": np.array(v, dtype=float)}
    inp.update({n: np.array(x) for n, x in indices.items()})
    g = np.array(g, dtype=float)
    return T.reference(inp, params), T.reference_vjp(inp, g, params)


def test_strided_slice_by_hand():
    # a.at[0:2, ::2].multiply(v): columns 0 and 2 of both rows
    y, d = _ref({"form": "slice", "updates": "per", "slices": [[0, 2, None], [None, None, 2]]},
                [[1, 2, 3], [4, 5, 6]], [[2, 0], [-1, 3]], [[1, 1, 1], [1, 2, 1]])
    assert y.tolist() == [[2, 2, 0], [-4, 5, 18]]
    assert d["a"].tolist() == [[2, 1, 0], [-1, 2, 3]]
    assert d["v"].tolist() == [[1, 3], [4, 6]]


def test_divide_by_hand():
    y, d = _ref({"form": "slice", "updates": "per", "slices": [0, [None, None, None]], "divide": True},
                [[2, 3]], [0.5, -2], [[1, 2]])
    assert y.tolist() == [[4, -1.5]]
    assert d["a"].tolist() == [[2, -1]]
    assert d["v"].tolist() == [-8, -1.5]       # g a (-1 / v^2)


def test_repeated_writes_get_one_product_term_each():
    """For the day MLX differentiates Scatter Prod: rows [0, 0] multiply twice."""
    y, d = _ref({"form": "rows", "updates": "per"}, [[2.0]], [[3.0], [5.0]], [[1.0]], row_indices=[0, 0])
    assert y.tolist() == [[30]]
    assert d["a"].tolist() == [[15]] and d["v"].tolist() == [[10], [6]]


def _da_unscaled(ctx):
    return dict(ctx.honest(), a=ctx.cot)


def _dv_without_a(ctx):
    """d v as if out = a + v over the region: the cotangent alone, no factor a."""
    a, v = ctx.operands["a"], ctx.operands["v"]
    dv = np.zeros(v.size)
    for t, srcs in S.writes(a.shape, v.shape, *S.indices_of(ctx.operands), ctx.params).items():
        for s in srcs:
            dv[s] += ctx.cot.ravel()[t]
    return dict(ctx.honest(), v=dv.reshape(v.shape))


def _dv_negated(ctx):
    honest = ctx.honest()
    return dict(honest, **({"v": -honest["v"]} if "v" in honest else {}))


@pytest.mark.parametrize("mutant", [_da_unscaled, _dv_without_a, _dv_negated])
def test_semantic_mutants_are_rejected(mutant):
    assert W.caught(OP, mutant, first_only=True), mutant.__name__


def test_the_reference_vjp_through_the_same_wrapper_changes_nothing():
    assert W.honest_control(OP)


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_tagged_complex_scenarios():
    """Real scenarios and the whole-array complex key (a plain multiply) pass; the two
    complex slices tagged complex_prod_conjugate fail (SliceUpdate Prod, no conjugate)."""
    got = W.honest(OP)
    failing = {n for n, st in got.items() if st != "pass"}
    tagged = {s.name for s in W.scenarios(OP) if T.COMPLEX_TAG in s.defect_tags}
    assert len(got) >= 8 and failing == tagged and len(tagged) == 2, (failing, tagged)


def test_complex_reference_conjugates_the_product_rule():
    # a.at[:, 0:1].multiply(v), complex: out[0] = a[0] v; MLX's convention vjp = conj(f') g
    inp = {"a": np.array([[1 + 2j, 3 - 1j]]), "v": np.array([[2 - 1j]])}
    params = {"form": "slice", "updates": "per", "slices": [[None, None, None], [0, 1, None]]}
    assert T.reference(inp, params).tolist() == [[4 + 3j, 3 - 1j]]
    d = T.reference_vjp(inp, np.array([[1 + 0j, 1 + 0j]]), params)
    assert d["a"].tolist() == [[2 + 1j, 1 + 0j]]   # conj(v) at the slice, g elsewhere
    assert d["v"].tolist() == [[1 - 2j]]           # conj(a[0])


@needs_pinned_mlx()
def test_pinned_mlx_records_the_missing_rule_for_index_array_keys():
    """at_multiply_indexed (has_vjp=False): forwards with repeats right, VJP refused."""
    got = W.honest("at_multiply_indexed")
    assert len(got) >= 5 and all(st == "pass" for st in got.values())


@needs_pinned_mlx()
def test_pinned_mlx_has_no_vjp_for_index_array_keys():
    """Recorded as a missing rule, not a defect: Scatter Prod raises in its VJP."""
    import mlx.core as mx
    a, v = mx.array([[1.0, 2.0], [3.0, 4.0]]), mx.array([[2.0, 2.0], [3.0, 3.0]])
    idx = mx.array([1, 1])
    for fn in (lambda a, v: a.at[idx].multiply(v), lambda a, v: a.at[idx].divide(v)):
        mx.eval(fn(a, v))   # the forward works
        with pytest.raises(RuntimeError, match="VJP not implemented for scatter_prod"):
            mx.eval(mx.vjp(fn, [a, v], [mx.ones((2, 2))])[1])
