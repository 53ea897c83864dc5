"""The gather family: float64 references against hand-worked examples and an
independent numpy formulation, a negative control (assign instead of add),
the catalog's family controls in MLX, and their rendered reproducers."""
import numpy as np
import pytest

from mlx_vjpcheck import ops
from mlx_vjpcheck.cases import catalog
from mlx_vjpcheck.core import checks
from mlx_vjpcheck.ops import gather_family as family

FAMILY_OPS = tuple(info.name for info in family.OPS)

try:
    import mlx.core as mx
except ImportError:
    mx = None


def test_take_backward_accumulates_repeats_and_leaves_unused_rows_zero():
    a = np.arange(12.0).reshape(4, 3)
    g = np.array([[1.0, 2, 3], [10, 20, 30], [100, 200, 300]])
    da = family.take_vjp(a, g, np.array([2, 0, 2]), 0)
    assert da.tolist() == [[10, 20, 30], [0, 0, 0], [101, 202, 303], [0, 0, 0]]
    assert family.take(a, np.array([2, 0, 2]), 0)[2].tolist() == [6, 7, 8]


def test_cancelling_cotangent_gives_exact_zero():
    ids = [1, 4, 1, 1, 4]
    g = family.cancelling_cotangent(ids, 3, 0)
    da = family.take_vjp(np.zeros((6, 3)), g, np.array(ids), 0)
    assert np.all(da[4] == 0) and np.all(da[[0, 2, 3, 5]] == 0)
    assert np.all(da[1] == g[3]) and np.all(g[2] == -g[0])   # 1 thrice: the first two cancel


def assign_vjp(a, g, idx):
    """The seed-001 bug: grad[id] = G[q] overwrites earlier occurrences."""
    da = np.zeros(np.shape(a))
    for q, i in enumerate(np.ravel(idx)):
        da[i] = g[q]
    return da


def test_negative_control_assign_instead_of_add_is_rejected():
    a, idx = np.ones((5, 2)), np.array([3, 3, 0])
    g = np.array([[1.0, 2], [3, 4], [5, 6]])
    good = family.take_vjp(a, g, idx, 0)
    bad = assign_vjp(a, g, idx)
    assert checks.compare("grad:a", good, good, *checks.tolerance("float32"))["passed"]
    assert not checks.compare("grad:a", bad, good, *checks.tolerance("float32"))["passed"]


def test_references_agree_with_numpy_scatter_add():
    rng = np.random.RandomState(0)
    for _ in range(20):
        V, D, n = rng.randint(1, 6), rng.randint(1, 70), rng.randint(1, 9)
        a, idx = rng.randint(-4, 5, (V, D)).astype(float), rng.randint(0, V, n)
        g = rng.randint(-4, 5, (n, D)).astype(float)
        want = np.zeros((V, D))
        np.add.at(want, idx, g)
        assert np.array_equal(family.take_vjp(a, g, idx, 0), want)
        assert np.array_equal(family.take(a, idx, 0), a[idx])
        v = rng.randint(-4, 5, (n, D)).astype(float)
        fwd = a.copy()
        np.add.at(fwd, idx, v)
        assert np.array_equal(family.at_add(a, idx, v), fwd)
        assert np.array_equal(family.at_add_vjp(a, a, idx, v)["v"], a[idx])
        ta = rng.randint(0, D, (V, 3))
        assert np.array_equal(family.take_along_axis(a, ta, 1), np.take_along_axis(a, ta, 1))
        want = np.zeros((V, D))
        np.add.at(want, (np.arange(V)[:, None].repeat(3, 1), ta), 1.0)
        assert np.array_equal(family.take_along_axis_vjp(a, np.ones((V, 3)), ta, 1), want)


def test_put_along_axis_reference():
    a = np.arange(8.0).reshape(2, 4)
    idx, v = np.array([[3, 0], [1, 1]]), np.array([[-1.0, -2], [-3, -3]])
    want = a.copy()
    np.put_along_axis(want, idx, v, 1)
    assert np.array_equal(family.put_along_axis(a, idx, v, 1), want)
    grads = family.put_along_axis_vjp(a, np.ones((2, 4)), idx, 1)
    assert grads["a"].tolist() == [[0, 1, 1, 0], [1, 0, 1, 1]]


def test_family_ops_are_registered_without_a_sorted_flag():
    for op in FAMILY_OPS:
        info = ops.get(op)
        assert not info.variants and not info.conditional_tags and not info.equivalent_params
        assert info.integer_operands == (family.INDEX,) and info.operands[-1] == family.INDEX
    fam = [s for s in catalog.catalog() if s.op in FAMILY_OPS]
    assert all(family.INDEX in s.operands and "sorted_indices" not in s.params for s in fam)
    assert {s.op for s in fam} == set(FAMILY_OPS)
    assert any(s.params.get("steps", 1) > 1 for s in fam)
    widths = {s.operands[ops.get(s.op).operands[0]].shape[-1] for s in fam}
    assert min(widths) == 1 and max(widths) > 64


@pytest.mark.skipif(mx is None, reason="mlx is not installed")
def test_family_catalog_controls_pass_in_mlx():
    from mlx_vjpcheck.running import execute
    mx.set_default_device(mx.cpu)
    for s in (s for s in catalog.catalog() if s.op in FAMILY_OPS):
        rec = execute.run(s, "cpu")
        assert rec["status"] == "pass", (s.name, rec["error"], [c["name"] for c in rec["checks"] if not c["passed"]])


@pytest.mark.skipif(mx is None, reason="mlx is not installed")
def test_mlx_embedding_backward_is_not_the_assign_rule():
    from mlx_vjpcheck.running import execute
    mx.set_default_device(mx.cpu)
    s = next(s for s in catalog.catalog() if s.name == "family/embedding/batch_repeat")
    call = execute.Call(s)
    y = call(*call.primals)
    _, (gw,) = mx.vjp(call, call.primals, [mx.ones(y.shape)])
    idx = np.array(s.operands[family.INDEX].values).reshape(s.operands[family.INDEX].shape)
    ones = np.ones(idx.shape + (np.shape(gw)[1],))
    wrong = assign_vjp(np.zeros(np.shape(gw)), ones.reshape(-1, ones.shape[-1]), idx.ravel())
    assert not checks.compare("grad", np.array(gw), wrong, *checks.tolerance("float32"))["passed"]


@pytest.mark.skipif(mx is None, reason="mlx is not installed")
def test_rendered_reproducers_of_the_controls_say_absent(tmp_path):
    """One reproducer per op (its call function out of the shared call file): exit 0."""
    import subprocess
    import sys

    from mlx_vjpcheck.cases import reproducer
    firsts = {}
    for s in catalog.catalog():
        if s.op in FAMILY_OPS:
            firsts.setdefault(s.op, s)
    assert set(firsts) == set(FAMILY_OPS)
    for op, s in firsts.items():
        script = tmp_path / f"{op}.py"
        script.write_text(reproducer.render(s, title=s.name))
        proc = subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0 and "VERDICT: defect absent" in proc.stdout, (op, proc.stdout, proc.stderr)
