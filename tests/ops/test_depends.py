"""depends (harness/ops/depends.py): inputs take their outputs' cotangents,
dependencies 0, by hand and against float64 differences; planted wrong rules (a
dependency given the cotangent, the outputs' cotangents swapped, wrong only for
a 0-d input) caught by the catalog; the pinned MLX verdicts (all pass; vmap is
not applicable, MLX has no vmap rule for Depends)."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from helpers import breadth as B
from mlx_vjpcheck.ops import depends as Dp


def test_rule_by_hand():
    inp = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0]), "c": np.array([5.0])}
    assert Dp.reference(inp, {"form": "pair"}).tolist() == [7, 10]
    d = Dp.reference_vjp(inp, np.array([1.0, -1.0]), {"form": "pair"})
    assert d["a"].tolist() == [1, -1] and d["b"].tolist() == [2, -2] and d["c"].tolist() == [0]


def test_reference_vjp_agrees_with_differences():
    compared, wrong = B.against_differences("depends")
    assert compared >= 5 and wrong == [], (compared, wrong)


def _dependency_gets_one(ctx):
    """Every dependency (b in the single form, c in the pair form) gets 1 instead of 0."""
    deps = ("b", "c") if ctx.params["form"] == "single" else ("c",)
    return {n: g + 1.0 if n in deps else g for n, g in ctx.honest().items()}


def _outputs_swapped(ctx):
    """The pair form's outputs' cotangents swapped: a gets 2 g, b gets g."""
    if ctx.params["form"] != "pair":
        return ctx.honest()
    return {n: g / 2 if n == "b" else 2 * g if n == "a" else g for n, g in ctx.honest().items()}


MUTANTS = {
    "dependency_gets_a_cotangent": _dependency_gets_one,
    "outputs_swapped": _outputs_swapped,
    "wrong_only_for_rank0": B.scaled_where(B.rank0),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_is_caught(name):
    assert B.first_order_caught("depends", MUTANTS[name], first_only=True), name


def test_the_true_rule_planted_the_same_way_passes():
    assert B.first_order_control("depends") == []


@needs_pinned_mlx()
def test_pinned_mlx_passes_the_catalog():
    failing, tagged = B.pinned_verdicts("depends")
    assert failing == tagged == set(), failing
