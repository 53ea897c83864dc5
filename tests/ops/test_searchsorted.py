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
