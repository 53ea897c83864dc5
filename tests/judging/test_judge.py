"""The one judging policy and the oracle table: statuses, failures in priority
order, confirmation, signatures, and the rows' own consistency."""
import numpy as np
import pytest

from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.cases import expected as expect
from mlx_vjpcheck.core import checks
from mlx_vjpcheck import oracles
from mlx_vjpcheck.judging import judge

TOL, FD_TOL = checks.tolerance("float32"), checks.tolerance("float32", "fd")


def _scenario(name="gmm/report_example/joint/unsorted"):
    return next(x for x in catalog.catalog() if x.name == name)


def _run_checks(s, grad_a):
    """What the reference and elementwise-difference oracles record for this gradient of a."""
    exp = expect.expected(s)
    obs = dict(exp, **{"grad:a": grad_a})
    made = [checks.compare(k, obs[k], exp[k], *TOL) for k in exp]
    return made + [checks.compare(f"fd:{n}", obs[f"grad:{n}"], exp[f"grad:{n}"], *FD_TOL, kind="fd")
                   for n in s.wrt]


def test_a_gradient_that_disagrees_with_finite_differences_fails_both_oracles():
    s = _scenario()
    assert judge.judge(s, _run_checks(s, expect.expected(s)["grad:a"])).status == "pass"
    verdict = judge.judge(s, _run_checks(s, np.array([3.0, 5.0]).reshape(2, 1, 1)))
    assert verdict.status == "fail" and verdict.confirmed
    assert {(f["oracle"], f["check"]) for f in verdict.failures} == {("reference", "grad:a"),
                                                                     ("fd_elementwise", "fd:a")}
    assert verdict.primary["oracle"] == "reference"   # the confirming oracle names the finding


def test_a_failure_of_a_non_confirming_oracle_alone_is_not_a_finding():
    s = _scenario()
    fd_only = [checks.compare("fd:a", [1.0], [2.0], *FD_TOL, kind="fd")]
    verdict = judge.judge(s, fd_only)
    assert verdict.status == "fail" and not verdict.confirmed


def test_statuses_and_the_error_kind():
    s = _scenario()
    assert judge.judge(s, [], "ValueError: [scatter_add_axis] boom").status == "error"
    assert judge.judge(s, []).status == "error"        # checked nothing: not a pass
    died = judge.judge(s, [], "process died during the vjp stage (signal SIGSEGV): x", crashed=True)
    assert died.status == "crashed" and died.primary["kind"] == "crash-signal-SIGSEGV"
    assert judge.error_kind("ValueError: [scatter_add_axis] boom") == "exception-ValueError-scatter_add_axis"
    assert judge.error_kind("process died during the oracles stage (exit code 1)") == "crash-exit-code-1-in-oracles"


def test_a_wrong_forward_comes_first():
    s = _scenario()
    bad = [checks.compare("grad:a", [1.0], [2.0], *TOL), checks.compare("forward", [1.0], [2.0], *TOL)]
    assert judge.judge(s, bad, "ValueError: x").failures[0]["check"] == "forward"


def test_signature_names_op_gradient_oracle_kind_and_form():
    s = _scenario("gmm/left_repeat/matrix/sorted")
    f = {"oracle": "reference", "gradient": "grad-a", "kind": "wrong-value", "check": "grad:a"}
    assert judge.signature(s, f) == "gather_mm__grad-a__reference__wrong-value__left_repeat"
    e = {"oracle": "vjp_exception", "gradient": "vjp", "kind": "exception-ValueError", "check": None}
    assert judge.signature(s, e).endswith("__any")


def test_every_check_kind_names_exactly_one_oracle_and_rows_are_consistent():
    kinds = [k for o in oracles.table() for k in o.kinds]
    assert len(kinds) == len(set(kinds))
    assert {o.name for o in oracles.table() if o.confirms} >= {"reference", "vjp_exception"}
    for o in oracles.table():
        assert ("validator" in o.where) == (o.recheck is not None), o.name
    assert [o.name for o in oracles.in_context("run")][:2] == ["vjp_exception", "reference"]


def test_a_row_refuses_an_unknown_context_and_a_recheck_without_the_validator():
    with pytest.raises(ValueError, match="unknown contexts"):
        oracles.Oracle("x", "", ("x",), ("lunch",), None, None, confirms=False)
    with pytest.raises(ValueError, match="recheck"):
        oracles.Oracle("x", "", ("x",), ("run",), None, lambda c, ctx: ([], c), confirms=False)


def test_features_separate_corners_and_leave_the_plain_call_alone():
    import dataclasses
    from mlx_vjpcheck.core.tensors import tensor
    s = _scenario("gmm/left_repeat/matrix/sorted")
    f = {"oracle": "reference", "gradient": "grad-a", "kind": "wrong-value", "check": "grad:a"}
    assert judge.features(s) == ()
    a = s.operands["a"]
    half = dataclasses.replace(s, operands=dict(s.operands, a=dataclasses.replace(a, dtype="bfloat16"),
                                                b=dataclasses.replace(s.operands["b"], dtype="bfloat16")))
    assert judge.signature(half, f) == "gather_mm__grad-a__reference__wrong-value__left_repeat__bfloat16"
    strided = dataclasses.replace(s, operands=dict(s.operands, a=tensor(
        [1.0, 9.0, 2.0, 9.0], views=[{"op": "slice", "index": [[0, 4, 2]]}])))
    assert judge.features(strided) == ("slice",)
    e = {"oracle": "vjp_exception", "gradient": "vjp", "kind": "exception-ValueError", "check": None}
    assert judge.signature(half, e).endswith("__any")   # exceptions keep their five parts


def test_a_known_finding_covers_only_calls_with_at_least_its_features():
    head = "op__grad-a__reference__wrong-value__plain"
    known = {f"{head}__bfloat16"}
    assert judge.covered(f"{head}__bfloat16", known)
    assert judge.covered(f"{head}__bfloat16+slice", known)
    assert not judge.covered(f"{head}__rank0", known)          # another corner: another defect
    assert not judge.covered(head, known)                      # the plain call fails too: new
    assert judge.covered(f"{head}__rank0", {head})             # a plain finding covers its corners
    assert not judge.covered("op__grad-b__reference__wrong-value__plain__rank0", {head})


def test_a_nondeterministic_vjp_within_tolerance_is_no_finding():
    """The nondeterminism filter: a second VJP that differs from the first
    (backward_twice) is a finding only where the float64 reference confirms one
    of them is wrong (the re-judged second gradient, grad:a#2)."""
    s = _scenario("gmm/report_example/wrt_a/unsorted")
    want = expect.expected(s)["grad:a"]
    first, second = want * (1 + 2.5e-5), want * (1 - 2.5e-5)
    made = [checks.compare("grad:a", first, want, *TOL),
            checks.compare("twice:a", second, first, *TOL, kind="twice")]
    jitter = judge.judge(s, made)
    assert [f["oracle"] for f in jitter.failures] == ["backward_twice"] and not jitter.confirmed
    wrong_once = made[:1] + [checks.compare("twice:a", 2 * want, first, *TOL, kind="twice"),
                             checks.compare("grad:a#2", 2 * want, want, *TOL)]
    assert judge.judge(s, wrong_once).confirmed


def test_empty_arrays_agree_as_json_keeps_them():
    """JSON holds an empty array's axes only up to its first 0: (0, 1) reads back as [],
    (2, 0) as [[], []]; both agree with the recomputed array. Negative control: a
    different leading axis, or a non-empty value, does not."""
    import numpy as np
    from mlx_vjpcheck.oracles.recheck import agree
    assert agree([], np.zeros((0, 1))) and agree([[], []], np.zeros((2, 0))) and agree([], np.zeros((0,)))
    assert not agree([[], []], np.zeros((3, 0))) and not agree([], np.zeros((1, 0))) and not agree([0.0], np.zeros((0, 1)))
