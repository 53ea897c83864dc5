"""searchsorted (harness/ops/searchsorted.py): both forms and both sides by hand
(hits at elements of s held fixed), planted wrong rules (the other side, a
nonzero gradient for s, wrong only for a 0-d v) caught by the catalog, and the
pinned MLX verdicts (all pass)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import searchsorted as S


def test_forms_by_hand():
    inp = {"s": np.array([1.0, 2.0, 2.0, 4.0]), "v": np.array([0.0, 2.0, 3.0, 5.0])}
    assert S.reference(inp, {"side": "left"}).tolist() == [0, 1, 3, 4]
    assert S.reference(inp, {"side": "right"}).tolist() == [0, 3, 3, 4]
    d = S.reference_vjp(inp, np.ones(4), {"side": "right", "form": "weighted"})
    assert d["v"].tolist() == [0, 3, 3, 4] and d["s"].tolist() == [0, 0, 0, 0]


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("searchsorted")
    assert compared >= 5 and wrong == [], (compared, wrong)


MUTANTS = {
    "other_side": lambda ctx: ctx.reference(side="right" if ctx.params.get("side", "left") == "left" else "left"),
    "gradient_for_the_sequence": lambda ctx: dict(ctx.honest(), s=np.ones(ctx.operands["s"].shape)),
    "wrong_only_for_rank0_values": B.wrong_shape_where(B.rank0),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("searchsorted", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("searchsorted") == []


@needs_pinned_mlx()
def test_pinned_mlx_passes_the_catalog():
    failing, tagged = B.pinned_verdicts("searchsorted")
    assert failing == tagged == set(), failing


# --- complex64 --------------------------------------------------------------------------------------

@needs_pinned_mlx()
def test_complex_search_is_numpys_lexicographic_order_in_mlx():
    import mlx.core as mx
    for side in ("left", "right"):
        got = np.array(mx.searchsorted(mx.array(S.S_C.astype(np.complex64)), mx.array(S.HITS_C.astype(np.complex64)),
                                       side=side))
        assert got.tolist() == np.searchsorted(S.S_C, S.HITS_C, side=side).tolist(), side


def _weighted(transform=None, by_real=False):
    """The weighted form's rule d v = g * index (d s = 0), numpy; `by_real` finds the
    index by real parts alone, `transform` changes d v."""
    def backward(ctx):
        s, v, p = ctx.operands["s"], ctx.operands["v"], ctx.params
        idx = np.searchsorted(np.real(s), np.real(v), side=p.get("side", "left")) if by_real else \
            S.index({"s": s, "v": v}, p)
        dv = ctx.cot * idx if p.get("form") == "weighted" else np.zeros(np.shape(v))
        dv = transform(dv) if transform else dv
        out = {"s": np.zeros(np.shape(s)), "v": dv}
        return {n: out[n] for n in ctx.names}
    return backward


COMPLEX_MUTANTS = {"conjugated": _weighted(np.conj), "imaginary_dropped": _weighted(np.real),
                   "by_real_part": _weighted(by_real=True)}


def _rejected(backward) -> list:
    from helpers import wrong_vjp as W
    return [s.name for s in W.scenarios("searchsorted") if W.honest("searchsorted")[s.name] == "pass"
            and W._judge(s, backward) != "pass"]


def test_the_true_weighted_rule_planted_passes():
    assert _rejected(_weighted()) == []


@pytest.mark.parametrize("mutant", sorted(COMPLEX_MUTANTS))
def test_complex_mutant_is_rejected_by_complex_weighted_scenarios_only(mutant):
    rejected = _rejected(COMPLEX_MUTANTS[mutant])
    assert rejected and all(n.startswith("searchsorted/weighted/") and n.endswith("/complex64")
                            for n in rejected), rejected
    if mutant == "by_real_part":
        assert rejected == ["searchsorted/weighted/convention/real_part_tie/complex64"], rejected
