"""The catalog as data: coverage of the report's families, flags, round trips,
and defect tags that agree with an independent structural rule."""
import json
import math

import numpy as np

from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.cases import expected as expect
from mlx_vjpcheck.core import layout
from mlx_vjpcheck import ops
from mlx_vjpcheck.core import scenario

CAT = catalog.catalog()
SORTED = "sorted_indices"


def test_every_scenario_of_an_op_with_variants_runs_in_each_variant():
    base = {}
    for s in (s for s in CAT if s.info.variants):
        stem, suffix = s.name.rsplit("/", 1)
        params = dict(s.info.variants)[suffix]
        assert all(s.params[k] == v for k, v in params.items()), s.name
        base.setdefault((s.op, stem), set()).add(suffix)
    assert base and all(v == {x for x, _ in ops.get(op).variants} for (op, _), v in base.items())
    assert {op for op, _ in base} == {"gather_mm", "gather_qmm"}


def test_ops_without_variants_appear_once_without_the_flag():
    fam = [s for s in CAT if not s.info.variants]
    assert fam and not any(SORTED in s.params for s in fam)
    assert len({s.name for s in fam}) == len(fam)


def test_every_catalog_scenario_is_bound_to_its_op_record():
    assert all(s.info is ops.get(s.op) for s in CAT)


def test_report_families_are_covered():
    families = {s.family for s in CAT}
    assert {"left_repeat", "left_omit", "identity", "right_sorted", "broadcast", "strided",
            "cotangent", "matmul", "loss", "backing_tail", "quantized",
            "both_explicit"} <= families
    names = " ".join(s.name for s in CAT)
    for needle in ("wrt_a", "wrt_b", "joint", "negative_cotangent", "zero_cotangent",
                   "qmm4/", "qmm8/", "wrt_x", "wrt_scales", "wrt_biases", "backing_tail/pos",
                   "backing_tail/neg", "pair_loss/hessian"):
        assert needle in names, needle
    assert any(s.fd_step for s in CAT if s.op == "gather_qmm")
    assert any(any(v["op"] == "transpose" for v in s.operands["a"].views) for s in CAT if s.op == "gather_mm")


def test_json_round_trip_is_lossless():
    text = scenario.dump_catalog(CAT)
    again = scenario.load_catalog(text)   # strict JSON: non-finite inputs as {"nonfinite": ...}
    assert all(s.info is None for s in again)   # read back unbound: the cases stage binds
    assert [s.to_dict() for s in again] == [s.to_dict() for s in CAT]


def _batch(s, operand):
    return math.prod(layout.logical(s.operands[operand]).shape[:-2])


def _shape(s, name):
    return layout.logical(s.operands[name]).shape


def _unflagged_tags(s) -> set:
    """Known classes that bite whatever the flag: a left operand without batch axes
    (the VJP's flatten raises), zero-size dimensions (SIGFPE in the VJP's kernel:
    N or K always; M unsorted, and for gather_qmm always), and gather_qmm in half
    precision off the sorted path (its VJP calls the float32-only GatherMM)."""
    left, right = s.operands.get("lhs_indices"), s.operands.get("rhs_indices")
    if s.must_refuse or (left is None and right is None):
        return set()
    flagged = bool(s.params.get(SORTED)) and (left is None) != (right is None)
    lhs_op, rhs_op = ("a", "b") if s.op == "gather_mm" else ("x", "codes")
    M, K = _shape(s, lhs_op)[-2:]
    stored_nk = s.op == "gather_qmm" and s.params.get("transpose", True)   # codes (.., N, K)
    N = _shape(s, rhs_op)[-2] if stored_nk else _shape(s, rhs_op)[-1]
    tags = {"no_batch"} if len(_shape(s, lhs_op)) == 2 else set()
    if N == 0 or K == 0 or (M == 0 and (not flagged or s.op == "gather_qmm")):
        tags.add("zero")
    if s.op == "gather_qmm" and s.dtype != "float32" and not flagged:
        tags.add("half")
    return tags | _transform_tags(s, flagged)


def _transform_tags(s, flagged) -> set:
    """The transform oracles' classes: second order on the sorted path wherever the
    right-hand gradient (gather_mm: b; gather_qmm: scales or biases) is taken, which
    goes through SegmentedMM (no VJP); and gather_qmm's scales/biases gradient of a
    transpose=False call (first order there, and second order of a transposed call
    that differentiates x too). The second-order oracle runs on float32 plain VJPs."""
    second = s.objective == "vjp" and s.dtype == "float32"
    right = {"b"} if s.op == "gather_mm" else {"scales", "biases"}
    tags = {"segmented"} if flagged and second and right & set(s.wrt) else set()
    if s.op == "gather_qmm" and right & set(s.wrt) and (
            not s.params.get("transpose", True) or ("x" in s.wrt and second)):
        tags.add("transpose_false")
    return tags


def _predicted_tags(s) -> set:
    """Independent structural rule for where the sorted fast path is invalid, and the
    classes that bite off it."""
    left, right = s.operands.get("lhs_indices"), s.operands.get("rhs_indices")
    if not s.params.get(SORTED) or (left is None) == (right is None):
        return _unflagged_tags(s)   # the flag only bites with exactly one index array
    lhs_op = "a" if s.op == "gather_mm" else "x"
    tags = _unflagged_tags(s)
    if any(len(t.shape) > 1 for t in (left, right) if t is not None):
        tags.add("rank2")
    if left is not None:
        ids = list(left.values)
        if ids != list(range(_batch(s, lhs_op))):
            tags.add("left")
    products = len((left or right).values)
    if _batch(s, lhs_op) < products and set(s.wrt) - {lhs_op}:
        tags.add("broadcast")
    return tags


def test_defect_tags_agree_with_the_structural_rule():
    """For the gather pair; other ops' tags name findings (tests/test_op_*.py check them)."""
    for s in CAT:
        if s.op in ("gather_mm", "gather_qmm") and not s.must_refuse:   # error inputs must be refused
            assert bool(_predicted_tags(s)) == s.expects_defect, s.name


def test_expected_values_exist_for_every_scenario():
    """Every scenario has a decided reference. Infinities are values (logsumexp at -inf
    inputs, an exclusive cummax's identity); a NaN would be a claim about nothing."""
    for s in CAT:
        exp = expect.expected(s)
        assert all(not np.any(np.isnan(v)) for v in exp.values()), s.name
        if s.must_refuse:   # an error input: nothing to differentiate
            continue
        if s.info.has_vjp:
            assert {f"grad:{w}" for w in s.wrt} <= set(exp)
        else:   # MLX defines no VJP: the forward, and the recorded refusal
            assert set(exp) == {"forward", "no_vjp"}


def test_the_catalog_is_built_once_per_registry(monkeypatch):
    """catalog() shares one build while the registry is the same one; a swapped registry
    (a plugin op, a test's wrong VJP) gets its own build, and each caller its own list."""
    from mlx_vjpcheck import ops
    from mlx_vjpcheck.cases import catalog as cat
    first, second = cat.catalog(), cat.catalog()
    assert first is not second and len(first) == len(second)
    assert all(a is b for a, b in zip(first, second))   # the same records: built once
    first.clear()
    assert len(cat.catalog()) == len(second)   # a caller's list is its own
    builds = []
    real = cat.base_scenarios
    monkeypatch.setattr(cat, "base_scenarios", lambda: builds.append(1) or real())
    cat.catalog()
    assert builds == []
    monkeypatch.setattr(ops, "_REGISTRY", {})   # rebuilt from the op modules: new records
    again = cat.catalog()
    assert builds == [1] and again[0] is not second[0]
    assert cat.digest(again) == cat.digest(second)   # (NaN operands: compared as text)
    cat.catalog()
    assert builds == [1]
