"""The sweep's API table against the installed MLX: every public function covered or
excluded with a reason, a new function shows up uncovered by itself, every entry runs."""
from __future__ import annotations

import types

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from mlx_vjpcheck.sweep import api, coverage, inventory, values

mx = pytest.importorskip("mlx.core")


def test_a_function_added_to_the_api_shows_up_as_not_covered():
    fake = types.ModuleType("mlx.core.fake")
    fake.__name__ = "mlx.core.fake"

    def brand_new(a):
        return a
    brand_new.__module__ = "mlx.core.fake"
    fake.brand_new = brand_new
    fake.sin = mx.sin   # a nanobind function: counted wherever it is found
    spaces = (("mx", fake, "functions"),)
    table = coverage.rows(inventory.public(spaces))
    states = {r.name: r.state for r in table}
    assert states == {"mx.brand_new": "not covered", "mx.sin": "covered"}
    assert coverage.percent(table) == 50.0


def test_the_inventory_reads_layers_and_skips_the_base_class():
    names = {f.name for f in inventory.public()}
    assert {"nn.Linear", "nn.gelu", "nn.losses.mse_loss", "mx.fast.rms_norm", "mx.linalg.inv"} <= names
    assert "nn.Module" not in names and "nn.losses.get_args" not in names


@needs_pinned_mlx()
def test_every_public_function_is_covered_or_excluded_with_a_reason():
    table = coverage.rows()
    assert [r.name for r in table if r.state == "not covered"] == []
    assert coverage.percent(table) >= coverage.TARGET_PERCENT
    assert coverage.stale() == []
    assert all(len(api.EXCLUDED[r.name]) > 20 for r in table if r.state == "excluded")


def test_entries_are_unique_and_name_functions():
    ids = [e.id for e in api.ENTRIES]
    assert len(ids) == len(set(ids))
    assert not set(e.name for e in api.ENTRIES) & set(api.EXCLUDED)


def _inputs(entry, rng):
    out = []
    for a in entry.args:
        if a is None:
            out.append(None)
            continue
        v = values.draw(a, rng)
        out.append(mx.array(v.astype(np.float32)) if v.dtype == np.float64 else mx.array(v))
    return out


@pytest.mark.parametrize("entry", api.ENTRIES, ids=lambda e: e.id)
def test_every_entry_runs_in_float32_at_its_generic_point(entry):
    xs = _inputs(entry, np.random.default_rng(0))
    out = entry.call()(*xs) if entry.layer else entry.call(*xs)
    mx.eval(out)
