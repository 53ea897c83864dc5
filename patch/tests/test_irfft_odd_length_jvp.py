import unittest

import mlx.core as mx
import mlx_tests


class TestIrfftOddLengthJvp(mlx_tests.MLXTestCase):
    # irfft is linear, so its tangent is irfft of the tangent with the same
    # output length n: y_j = (t_0 + 2 Re sum_{k>=1} t_k e^{2 pi i j k / n}) / n
    # for odd n. The length must be the forward's n, not 2 (m - 1).

    def test_irfft_jvp_odd_n(self):
        a = mx.array([1.0 + 0j, 2.0, 0.0])
        t = mx.array([0.0 + 0j, 1.0, 0.0])
        (y,), (dy,) = mx.jvp(lambda x: mx.fft.irfft(x, n=5), [a], [t])
        self.assertEqual(y.shape, (5,))
        self.assertEqual(dy.shape, (5,))
        # (2 / 5) cos(2 pi j / 5)
        expected = mx.array([0.4, 0.123607, -0.323607, -0.323607, 0.123607])
        self.assertTrue(mx.allclose(dy, expected, atol=1e-5))

    def test_irfftn_jvp_odd_last_length(self):
        # s = (4, 3): input (4, 2), output (4, 3); tangent e_{1,1}
        a = mx.zeros((4, 2), dtype=mx.complex64)
        t = mx.zeros((4, 2), dtype=mx.complex64)
        t[1, 1] = 1.0
        f = lambda x: mx.fft.irfftn(x, s=[4, 3], axes=[0, 1])
        (_,), (dy,) = mx.jvp(f, [a], [t])
        self.assertEqual(dy.shape, (4, 3))
        # (2 / 12) cos(2 pi (j0 / 4 + j1 / 3))
        expected = mx.array(
            [
                [0.166667, -0.083333, -0.083333],
                [0.0, -0.144338, 0.144338],
                [-0.166667, 0.083333, 0.083333],
                [0.0, 0.144338, -0.144338],
            ]
        )
        self.assertTrue(mx.allclose(dy, expected, atol=1e-5))

    def test_irfft_vmap_odd_n(self):
        # vmap(f)(A) must equal stacking f(A[i]): each row keeps length 5
        a = mx.array([[1.0 + 0j, 2.0, 0.0], [0.0, 0.0, 1.0]])
        out = mx.vmap(lambda x: mx.fft.irfft(x, n=5))(a)
        self.assertEqual(out.shape, (2, 5))
        expected = mx.array(
            [
                [1.0, 0.447214, -0.447214, -0.447214, 0.447214],
                [0.4, -0.323607, 0.123607, 0.123607, -0.323607],
            ]
        )
        self.assertTrue(mx.allclose(out, expected, atol=1e-5))

    def test_even_n_unchanged(self):
        a = mx.array([1.0 + 0j, 2.0, 0.0])
        t = mx.array([0.0 + 0j, 1.0, 0.0])
        (_,), (dy,) = mx.jvp(lambda x: mx.fft.irfft(x), [a], [t])
        # n = 4: (2 / 4) cos(pi j / 2)
        self.assertTrue(mx.allclose(dy, mx.array([0.5, 0.0, -0.5, 0.0]), atol=1e-6))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
