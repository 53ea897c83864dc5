import unittest

import mlx.core as mx
import mlx_tests


class TestQuantizedMatmulVectorX(mlx_tests.MLXTestCase):
    # y_n = sum_k x_k W[n, k] with W[n, k] = s[n, k // gs] * c[n, k] + b[n, k // gs]
    # (transpose=True) so for a vector x:
    #   dx_k = sum_n g_n W[n, k]
    #   ds[n, j] = g_n * sum_{k in group j} x_k c[n, k]
    #   db[n, j] = g_n * sum_{k in group j} x_k
    # The codes are packed directly (4 bits): every code of row 0 is 1, of
    # row 1 is 2.

    def test_vector_x_transposed(self):
        w_q = mx.array([[0x11111111] * 8, [0x22222222] * 8], mx.uint32)
        scales = mx.array([[1.0, 2.0], [1.0, 1.0]])
        biases = mx.array([[0.0, 1.0], [3.0, 0.0]])
        x = mx.array([1.0] * 32 + [2.0] * 32)
        g = mx.array([1.0, 2.0])

        def fun(x, scales, biases):
            return mx.quantized_matmul(
                x, w_q, scales, biases, transpose=True, group_size=32, bits=4
            )

        (y,), (dx, ds, db) = mx.vjp(fun, [x, scales, biases], [g])
        # W = [[1] * 32 + [3] * 32, [5] * 32 + [2] * 32]
        self.assertEqual(y.tolist(), [224.0, 288.0])
        self.assertEqual(dx.tolist(), [11.0] * 32 + [7.0] * 32)
        self.assertEqual(ds.tolist(), [[32.0, 64.0], [128.0, 256.0]])
        self.assertEqual(db.tolist(), [[32.0, 64.0], [64.0, 128.0]])

        # The same through a single row matrix
        (y2,), (dx2, ds2, db2) = mx.vjp(fun, [x[None], scales, biases], [g[None]])
        self.assertEqual(dx2.tolist(), [dx.tolist()])
        self.assertEqual(ds2.tolist(), ds.tolist())
        self.assertEqual(db2.tolist(), db.tolist())

    def test_vector_x_not_transposed(self):
        # transpose=False: W is (K, N) = (2, 32), quantized along N
        w_q = mx.array([[0x11111111] * 4, [0x22222222] * 4], mx.uint32)
        scales = mx.array([[1.0], [2.0]])
        biases = mx.array([[1.0], [0.0]])
        x = mx.array([1.0, 3.0])
        g = mx.ones((32,))

        def fun(x, scales, biases):
            return mx.quantized_matmul(
                x, w_q, scales, biases, transpose=False, group_size=32, bits=4
            )

        (y,), (dx, ds, db) = mx.vjp(fun, [x, scales, biases], [g])
        # W = [[2] * 32, [4] * 32]
        self.assertEqual(y.tolist(), [14.0] * 32)
        self.assertEqual(dx.tolist(), [64.0, 128.0])
        self.assertEqual(ds.tolist(), [[32.0], [192.0]])
        self.assertEqual(db.tolist(), [[32.0], [96.0]])

        # wrt the scales only
        ds_only = mx.grad(lambda s: (fun(x, s, biases) * g).sum())(scales)
        self.assertEqual(ds_only.tolist(), [[32.0], [192.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
