"""The validator's re-derivation of the transform, status and precision checks
(harness/oracles/): an honest record re-checks clean; a forged observed
value, a forged expected value, a forged direction seed, a forged tolerance
term or a status check without its exception is rejected."""
import copy

import numpy as np
import pytest

from mlx_vjpcheck.cases import expected
from mlx_vjpcheck import oracles
from mlx_vjpcheck.oracles import recheck
from mlx_vjpcheck.running import devices, execute

pytest.importorskip("mlx.core")
from transform_mutants import case  # noqa: E402


def _context(s, rec):
    exp = expected.expected(s)
    return recheck.Context(s, exp, rec, {c["name"]: c for c in rec["checks"]}, True)


def _recheck(c, ctx):
    return oracles.of_kind(c["kind"]).recheck(c, ctx)


@pytest.fixture(scope="module")
def honest():
    devices.select("cpu")
    s = case("right", cot=[1.0, 2.0, -1.0, 3.0])
    return s, execute.measure(s, "cpu", "fuzz")[0]      # every oracle, compile included


def test_every_check_of_an_honest_record_rechecks_clean(honest):
    s, rec = honest
    ctx = _context(s, rec)
    kinds = set()
    for c in rec["checks"]:
        reasons, new = _recheck(c, ctx)
        assert reasons == [] and new["passed"], (c["name"], reasons)
        kinds.add(c["kind"])
    assert {"compile", "vmap", "second_order", "forward_mode"} <= kinds


@pytest.mark.parametrize("name", ["compile:grad:a", "vmap:grad:a#1", "second:a", "jvp:forward"])
def test_a_forged_observed_value_is_rejected(honest, name):
    s, rec = honest
    c = copy.deepcopy(next(c for c in rec["checks"] if c["name"] == name))
    c["observed"] = (np.asarray(c["observed"]) + 1.0).tolist()     # still marked passed
    reasons, new = _recheck(c, _context(s, rec))
    assert reasons and not new["passed"]


@pytest.mark.parametrize("name", ["vmap:grad:a#1", "second:a"])
def test_forged_expected_values_are_rejected(honest, name):
    s, rec = honest
    c = copy.deepcopy(next(c for c in rec["checks"] if c["name"] == name))
    c["expected"] = c["observed"] = (np.asarray(c["expected"]) * 3.0).tolist()   # self-consistent
    reasons, _ = _recheck(c, _context(s, rec))
    assert any("expected values differ" in r for r in reasons)


def test_a_forged_direction_seed_is_rejected(honest):
    s, rec = honest
    c = copy.deepcopy(next(c for c in rec["checks"] if c["name"] == "second:a"))
    c["seed"] += 1
    assert _recheck(c, _context(s, rec))[0]
    c["seed"] = "0"
    assert _recheck(c, _context(s, rec))[0]


def test_a_status_check_needs_its_exception():
    devices.select("cpu")
    s = case("raises2")
    rec = execute.run(s, "cpu")
    c = next(c for c in rec["checks"] if c["name"] == "second:status")
    assert _recheck(c, _context(s, rec))[0] == []
    assert _recheck(dict(c, error=None), _context(s, rec))[0]
    assert _recheck(dict(c, passed=True), _context(s, rec))[0]


def test_the_accumulation_term_is_rederived_not_trusted():
    """bfloat16: the record's tolerance term must be the model's, re-derived from
    the scenario (here the toy op is not multilinear, so there must be none)."""
    devices.select("cpu")
    s = case("right", dtype="bfloat16")
    rec = execute.run(s, "cpu")
    c = next(c for c in rec["checks"] if c["name"] == "grad:a")
    forged = dict(c, accumulation={"unit_roundoff": 2.0 ** -8, "depth": 3, "terms": [1000] * 4,
                                   "magnitude": [1e6] * 4})
    reasons, _ = _recheck(forged, _context(s, rec))
    assert any("accumulation" in r for r in reasons)
