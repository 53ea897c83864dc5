"""at_min (a.at[idx].minimum(v), Scatter / SliceUpdate Min): hand-computed
reference, the strategy's no-tie promise, the at_max mutants applied to the
minimum, and the pinned MLX verdicts."""
from __future__ import annotations

import pytest

import scatter_slice_mutants as M
from conftest import needs_pinned_mlx
from test_op_at_max import MUTANTS, competitors_apart, extremal


@pytest.fixture
def registry(monkeypatch):
    return M.use_plugins(monkeypatch)


def test_cols_with_repeats_by_hand(registry):
    # a[:, [1, 1]] .minimum: column 1 gets min(a, v[:, 0], v[:, 1]) row by row
    y, d = extremal("at_min", {"form": "cols", "updates": "per"}, [[0, 4], [8, -4]],
                    [[-8, 12], [16, 20]], [1, 1], g=[[1, 2], [3, 4]])
    assert y.tolist() == [[0, -8], [8, -4]]
    assert d["a"].tolist() == [[1, 0], [3, 4]]
    assert d["v"].tolist() == [[2, 0], [0, 0]]


def test_broadcast_value_written_twice_counts_once(registry):
    y, d = extremal("at_min", {"form": "points", "updates": "broadcast"}, [[4, 0]], [-4], [0, 0], [0, 0],
                    g=[[3, 5]])
    assert y.tolist() == [[-4, 0]]
    assert d["a"].tolist() == [[0, 5]] and d["v"].tolist() == [3]


def test_strategy_keeps_competitors_apart(registry):
    competitors_apart("at_min")


@pytest.mark.parametrize("mutant", MUTANTS)
def test_semantic_mutants_are_rejected(registry, monkeypatch, mutant):
    assert M.caught(monkeypatch, "at_min", mutant), mutant.__name__


@needs_pinned_mlx()
def test_pinned_mlx_fails_exactly_the_tagged_scenarios(registry):
    got = M.statuses("at_min")
    assert {n for n, (st, _) in got.items() if st != "pass"} == {n for n, (_, tags) in got.items() if tags}
    assert {tags for _, tags in got.values()} == {(), ("tied_duplicates",), ("array_then_slice",)}
