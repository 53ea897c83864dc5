import unittest

import mlx.core as mx
import mlx_tests


class TestGatherSegmentedSecondOrder(mlx_tests.MLXTestCase):
    # With sorted right indices the weight gradient is a segmented product,
    #   dW[e] = sum_{q: j_q = e} X[q]^T G[q]   (gather_mm; its transpose
    #   for gather_qmm, whose ds / db sum dW * codes / dW over each group),
    # and its own VJP, for a cotangent V of dW, is
    #   dX[q] = G[q] V[j_q]^T,  dG[q] = X[q] V[j_q].

    def test_gather_mm_right_sorted(self):
        a = mx.array([1.0, 2.0, 3.0]).reshape(3, 1, 1)
        b = mx.array([5.0, 7.0]).reshape(2, 1, 1)
        g = mx.array([1.0, 2.0, 3.0]).reshape(3, 1, 1)
        v = mx.array([1.0, 10.0]).reshape(2, 1, 1)
        ids = mx.array([0, 0, 1], mx.uint32)

        def db(a, g):
            fun = lambda b: mx.gather_mm(a, b, rhs_indices=ids, sorted_indices=True)
            return mx.vjp(fun, [b], [g])[1][0]

        (d,), (da, dg) = mx.vjp(db, [a, g], [v])
        # dB = [1 * 1 + 2 * 2, 3 * 3] = [5, 9]
        self.assertEqual(d.reshape(-1).tolist(), [5.0, 9.0])
        # dA[q] = g_q v[j_q], dG[q] = a_q v[j_q]
        self.assertEqual(da.reshape(-1).tolist(), [1.0, 2.0, 30.0])
        self.assertEqual(dg.reshape(-1).tolist(), [1.0, 2.0, 30.0])

    def test_gather_qmm_right_sorted(self):
        # Two experts, W[e] is (N, K) = (1, 32): codes 1 for expert 0, 2 for
        # expert 1; three rows x_q = q + 1, right ids [0, 0, 1]
        w_q = mx.array([[[0x11111111] * 4], [[0x22222222] * 4]], mx.uint32)
        scales = mx.ones((2, 1, 1))
        biases = mx.zeros((2, 1, 1))
        x = mx.array([[[1.0] * 32], [[2.0] * 32], [[3.0] * 32]])
        g = mx.array([1.0, 2.0, 3.0]).reshape(3, 1, 1)
        v = mx.array([1.0, 10.0]).reshape(2, 1, 1)
        ids = mx.array([0, 0, 1], mx.uint32)

        def ds(x, g):
            fun = lambda s: mx.gather_qmm(
                x,
                w_q,
                s,
                biases,
                rhs_indices=ids,
                transpose=True,
                group_size=32,
                bits=4,
                sorted_indices=True,
            )
            return mx.vjp(fun, [scales], [g])[1][0]

        (d,), (dx, dg) = mx.vjp(ds, [x, g], [v])
        # ds[e] = sum_{q: j_q = e} g_q * 32 * x_q * c_e = [32 * 5, 64 * 9]
        self.assertEqual(d.reshape(-1).tolist(), [160.0, 576.0])
        # dx[q][k] = g_q v[j_q] c[j_q], dg[q] = v[j_q] sum_k x_q[k] c[j_q]
        self.assertEqual(dx[:, 0, 0].tolist(), [1.0, 2.0, 60.0])
        self.assertEqual(dx[:, 0, 31].tolist(), [1.0, 2.0, 60.0])
        self.assertEqual(dg.reshape(-1).tolist(), [32.0, 64.0, 1920.0])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
