import unittest

import mlx.core as mx
import mlx_tests


class TestSliceUpdateProdComplexGrad(mlx_tests.MLXTestCase):
    # out = a.at[s].multiply(v): out[s] = a[s] * v. For complex input MLX's
    # VJP is conj(df/dz) * g (as Multiply::vjp gives), so d a[s] = g conj(v)
    # and d v = g conj(a[s]).

    def test_slice_multiply(self):
        a = mx.array([[1 + 2j, 3 - 1j]])
        v = mx.array([[2 - 1j]])
        g = mx.ones((1, 2), dtype=mx.complex64)
        f = lambda a, v: a.at[:, 0:1].multiply(v)
        _, (da, dv) = mx.vjp(f, [a, v], [g])
        self.assertEqual(da.tolist(), [[2 + 1j, 1 + 0j]])
        self.assertEqual(dv.tolist(), [[1 - 2j]])

    def test_two_of_three(self):
        # d a = g conj(v) on the slice, g elsewhere; d v = g conj(a[0:2])
        a = mx.array([1 + 2j, -1 + 1j, 3 + 0j])
        v = mx.array([2 - 1j, 1j])
        g = mx.array([1 - 1j, 2 + 0j, 1j])
        _, (da, dv) = mx.vjp(lambda a, v: a.at[0:2].multiply(v), [a, v], [g])
        self.assertEqual(da.tolist(), [3 - 1j, -2j, 1j])
        self.assertEqual(dv.tolist(), [-1 - 3j, -2 - 2j])

    def test_slice_divide(self):
        # .divide(v) multiplies by 1 / v: d v = -g conj(a[s] / v^2)
        a = mx.array([1 + 1j, 2 + 0j])
        v = mx.array([1j])
        g = mx.array([1 + 0j, 1 + 0j])
        _, (da, dv) = mx.vjp(lambda a, v: a.at[0:1].divide(v), [a, v], [g])
        self.assertTrue(mx.allclose(da, mx.array([1j, 1 + 0j])))
        self.assertTrue(mx.allclose(dv, mx.array([1 - 1j])))

    def test_real_unchanged(self):
        a = mx.array([1.0, 2.0, 3.0])
        v = mx.array([4.0])
        _, (da, dv) = mx.vjp(lambda a, v: a.at[1:2].multiply(v), [a, v], [mx.ones(3)])
        self.assertEqual(da.tolist(), [1.0, 4.0, 1.0])
        self.assertEqual(dv.tolist(), [2.0])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
