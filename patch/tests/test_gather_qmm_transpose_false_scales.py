import unittest

import mlx.core as mx
import mlx_tests


class TestGatherQMMTransposeFalseScales(mlx_tests.MLXTestCase):
    # transpose=False stores W[e] as (K, N), quantized along N:
    #   W[e][k, n] = s[e][k, n // gs] * c[e][k, n] + b[e][k, n // gs]
    # and Y[q] = X[i_q] W[j_q], so dW[e] = sum_{q: j_q = e} X[i_q]^T G[q] is
    # (K, N) too and
    #   ds[e][k, j] = sum_{n in group j} dW[e][k, n] c[e][k, n],
    #   db[e][k, j] = sum_{n in group j} dW[e][k, n].
    # Codes are packed directly (4 bits, 8 per word).

    def test_two_groups_along_n(self):
        # One expert, K = 1, N = 64: codes 1 in group 0, 3 in group 1
        w_q = mx.array([[[0x11111111] * 4 + [0x33333333] * 4]], mx.uint32)
        scales = mx.array([[[1.0, 2.0]]])
        biases = mx.array([[[0.0, 1.0]]])
        x = mx.array([[[2.0]], [[1.0]]])
        ids = mx.array([0, 0], mx.uint32)
        g = mx.ones((2, 1, 64))
        for sorted_indices in (True, False):

            def fun(scales, biases):
                return mx.gather_qmm(
                    x,
                    w_q,
                    scales,
                    biases,
                    rhs_indices=ids,
                    transpose=False,
                    group_size=32,
                    bits=4,
                    sorted_indices=sorted_indices,
                )

            (y,), (ds, db) = mx.vjp(fun, [scales, biases], [g])
            # W = [[1] * 32 + [7] * 32]; dW = (2 + 1) * ones
            self.assertEqual(y[0, 0].tolist(), [2.0] * 32 + [14.0] * 32)
            self.assertEqual(ds.tolist(), [[[96.0, 288.0]]])
            self.assertEqual(db.tolist(), [[[96.0, 96.0]]])

    def test_square_groups_not_transposed_back(self):
        # K = N = 32, every code 1, unit scales: x = e_0 gives dW = e_0 1^T,
        # so only row k = 0 has a gradient (the transposed dW would give
        # every row 1)
        w_q = mx.array([[[0x11111111] * 4] * 32], mx.uint32)
        scales = mx.ones((1, 32, 1))
        biases = mx.zeros((1, 32, 1))
        x = mx.array([[[1.0] + [0.0] * 31]])
        ids = mx.array([0], mx.uint32)

        def fun(scales):
            return mx.gather_qmm(
                x,
                w_q,
                scales,
                biases,
                lhs_indices=ids,
                transpose=False,
                group_size=32,
                bits=4,
            ).sum()

        ds = mx.grad(fun)(scales)
        self.assertEqual(ds.reshape(-1).tolist(), [32.0] + [0.0] * 31)

    def test_second_order_through_dx(self):
        # transpose=True, W[e] is (N, K) = (2, 32), codes 1 in row 0, 2 in
        # row 1. dx[k] = sum_n g_n W[n, k] is a gather_qmm with
        # transpose=False, so d<dx, u>/ds[n, 0] = g_n sum_k u_k c[n, k]
        w_q = mx.array([[[0x11111111] * 4, [0x22222222] * 4]], mx.uint32)
        scales = mx.array([[[1.0], [1.0]]])
        biases = mx.array([[[0.0], [0.0]]])
        x = mx.ones((1, 1, 32))
        g = mx.array([[[1.0, 2.0]]])
        u = mx.ones((1, 1, 32))
        ids = mx.array([0], mx.uint32)
        for sorted_indices in (True, False):

            def dx(scales):
                fun = lambda x: mx.gather_qmm(
                    x,
                    w_q,
                    scales,
                    biases,
                    lhs_indices=ids,
                    transpose=True,
                    group_size=32,
                    bits=4,
                    sorted_indices=sorted_indices,
                )
                return mx.vjp(fun, [x], [g])[1][0]

            (d,), (ds2,) = mx.vjp(dx, [scales], [u])
            # W = [[1] * 32, [2] * 32]: dx = 1 * 1 + 2 * 2 = 5 everywhere
            self.assertEqual(d.reshape(-1).tolist(), [5.0] * 32)
            self.assertEqual(ds2.tolist(), [[[32.0], [128.0]]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
