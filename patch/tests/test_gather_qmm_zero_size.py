import unittest

import mlx.core as mx
import mlx_tests


class TestQuantizedZeroSize(mlx_tests.MLXTestCase):
    # A product with K = 0 is a sum of no terms: zeros of shape (..., M, N).
    # With N = 0 it is empty, and the gradient of x (a sum over the empty N)
    # is zeros of x's shape; the scales and biases get empty gradients.

    def test_empty_contraction(self):
        x = mx.zeros((2, 1, 0))
        w_q = mx.zeros((2, 3, 0), mx.uint32)
        scales = mx.zeros((2, 3, 0))
        biases = mx.zeros((2, 3, 0))
        ids = mx.array([1, 0], mx.uint32)
        for sorted_indices in (True, False):
            fun = lambda x, s, b: mx.gather_qmm(
                x, w_q, s, b, lhs_indices=ids, sorted_indices=sorted_indices
            )
            (y,), (dx, ds, db) = mx.vjp(fun, [x, scales, biases], [mx.ones((2, 1, 3))])
            self.assertEqual(y.tolist(), [[[0.0] * 3]] * 2)
            self.assertEqual(dx.shape, (2, 1, 0))
            self.assertEqual(ds.shape, (2, 3, 0))
            self.assertEqual(db.shape, (2, 3, 0))

        y = mx.quantized_matmul(x[0], w_q[0], scales[0], biases[0])
        self.assertEqual(y.tolist(), [[0.0] * 3])

    def test_empty_output_columns(self):
        x = mx.ones((2, 1, 32))
        w_q = mx.zeros((2, 0, 4), mx.uint32)
        scales = mx.zeros((2, 0, 1))
        biases = mx.zeros((2, 0, 1))
        for sorted_indices in (True, False):
            fun = lambda x, s, b: mx.gather_qmm(
                x,
                w_q,
                s,
                b,
                rhs_indices=mx.array([0, 1], mx.uint32),
                group_size=32,
                bits=4,
                sorted_indices=sorted_indices,
            )
            (y,), (dx, ds, db) = mx.vjp(fun, [x, scales, biases], [mx.zeros((2, 1, 0))])
            self.assertEqual(y.shape, (2, 1, 0))
            self.assertEqual(dx.tolist(), [[[0.0] * 32]] * 2)
            self.assertEqual(ds.shape, (2, 0, 1))
            self.assertEqual(db.shape, (2, 0, 1))

    def test_dequantize_empty_matrix(self):
        for bits in (3, 4, 6, 8):
            w = mx.zeros((0, bits), mx.uint32)
            out = mx.dequantize(
                w, mx.zeros((0, 1)), mx.zeros((0, 1)), group_size=32, bits=bits
            )
            self.assertEqual(out.shape, (0, 32))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
