"""gather_qmm: the dequantization rule (ops/_support/quantized.py) against values
computed by hand (the report's quantized numbers), the packing of codes, and the
rendered reproducer of the quantized form of the defect."""
import subprocess
import sys

import numpy as np
import pytest

from conftest import needs_pinned_mlx
from mlx_vjpcheck.core import quant
from mlx_vjpcheck.ops import gather_qmm
from mlx_vjpcheck.ops._support import gather as G
from mlx_vjpcheck.ops._support import quantized as Q

K = N = 32
X = np.array([2.0] * K + [7.0] * K).reshape(2, 1, K)
CODES = np.ones((2, N, K))
SCALES = np.ones((2, N, 1))
BIASES = np.concatenate([np.full((1, N, 1), 2.0), np.full((1, N, 1), 4.0)])


def test_quantized_report_example():
    w = Q.dequantize(CODES, SCALES, BIASES, 32)
    assert np.all(w[0] == 3.0) and np.all(w[1] == 5.0)
    y = Q.gather_qmm(X, CODES, SCALES, BIASES, lhs=[0, 0], group_size=32)
    assert np.all(y[0] == 2 * 3 * K) and np.all(y[1] == 2 * 5 * K)
    g = Q.gather_qmm_vjp(X, CODES, SCALES, BIASES, np.ones((2, 1, N)), lhs=[0, 0], group_size=32)
    assert np.all(g["x"][0] == 256.0) and np.all(g["x"][1] == 0.0)      # 32*3 + 32*5
    assert np.all(g["scales"] == 64.0) and np.all(g["biases"] == 64.0)   # sum_k code * x0


def test_the_records_reference_reads_index_operands_and_params():
    inp = {"x": X, "codes": CODES.astype(np.int64), "scales": SCALES, "biases": BIASES, G.LHS: np.array([0, 0])}
    params = {"bits": 4, "group_size": 32, "transpose": True, "mode": "affine", G.SORTED: True}
    assert np.all(gather_qmm.reference(inp, params)[1] == 2 * 5 * K)
    g = gather_qmm.reference_vjp(inp, np.ones((2, 1, N)), params)
    assert np.all(g["x"][0] == 256.0) and np.all(g["x"][1] == 0.0) and np.all(g["scales"] == 64.0)


def test_dequantize_groups_along_k():
    codes = np.array([[[1, 2, 3, 4]]], dtype=float)
    w = Q.dequantize(codes, np.array([[[2.0, -1.0]]]), np.array([[[0.5, 10.0]]]), 2)
    assert w.ravel().tolist() == [2.5, 4.5, 7.0, 6.0]


def test_dequantize_groups_along_the_stored_last_axis_untransposed():
    # Stored (E, K, N) = (1, 2, 4), groups of 2 along N: MLX quantizes the last axis.
    codes = np.array([[[1, 2, 3, 4], [5, 6, 7, 8]]], dtype=float)
    scales = np.array([[[1.0, 2.0], [3.0, 4.0]]])
    biases = np.zeros((1, 2, 2))
    w = Q.dequantize(codes, scales, biases, 2)
    assert w.ravel().tolist() == [1.0, 2.0, 6.0, 8.0, 15.0, 18.0, 28.0, 32.0]


def test_pack_matches_documented_words():
    assert quant.pack(np.ones((1, 8)), 4).tolist() == [[0x11111111]]
    assert quant.pack(np.ones((1, 4)), 8).tolist() == [[0x01010101]]
    assert quant.pack([[1, 0, 0, 0, 0, 0, 0, 15]], 4).tolist() == [[0xF0000001]]
    with pytest.raises(ValueError):
        quant.pack([[16] * 8], 4)


def test_the_call_files_own_pack_is_the_harness_pack():
    pytest.importorskip("mlx.core")
    from mlx_vjpcheck.ops.repro import gather_qmm as call
    codes = np.random.RandomState(0).randint(0, 16, (3, 2, 64))
    for bits in (4, 8):
        c = codes % (1 << bits)
        assert np.array_equal(call.pack(c, bits), quant.pack(c, bits))


def _reproducer_exit(s, tmp_path) -> int:
    from mlx_vjpcheck.cases import reproducer
    script = tmp_path / "repro.py"
    script.write_text(reproducer.render(s, title=s.name))
    return subprocess.run([sys.executable, str(script), "--device", "cpu"], capture_output=True,
                          timeout=120).returncode


@needs_pinned_mlx()
def test_pinned_mlx_reproducer_shows_the_sorted_path_only(tmp_path):
    """The rendered reproducer of the quantized report example: defect present with
    sorted_indices, absent on the unsorted twin."""
    from mlx_vjpcheck.cases import catalog
    cat = {s.name: s for s in catalog.catalog() if s.op == "gather_qmm"}
    assert _reproducer_exit(cat["qmm4/report_example/joint/sorted"], tmp_path) == 1
    assert _reproducer_exit(cat["qmm4/report_example/joint/unsorted"], tmp_path) == 0
