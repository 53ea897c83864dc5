import unittest

import mlx.core as mx
import mlx_tests


class TestLogcumsumexpComplexVJP(mlx_tests.MLXTestCase):
    # y_i = log(sum_{j <= i} e^(x_j)), dy_i / dx_j = e^(x_j - y_i); the VJP is
    # dx_j = sum_{i >= j} g_i conj(e^(x_j - y_i)) (MLX's complex convention,
    # g * conj(f'(z))). x = [i, 0]: e^(x_0 - y_1) = 1 / (1 + e^-i)
    # = (1 + i tan(1/2)) / 2 and e^(x_1 - y_1) = (1 - i tan(1/2)) / 2,
    # tan(1/2) / 2 = 0.2731512.

    def test_single_element(self):
        # y = x, dx = g
        _, (dx,) = mx.vjp(mx.logcumsumexp, [mx.array([0j])], [mx.array([1j])])
        self.assertTrue(mx.allclose(dx, mx.array([1j]), atol=1e-6))

    def test_two_elements(self):
        # dx_0 = g_0 + g_1 (1 - 0.2731512i) / 2 with g = [i, 1]
        # dx_1 = g_1 (1 + 0.2731512i) / 2
        x = mx.array([1j, 0j])
        g = mx.array([1j, 1 + 0j])
        _, (dx,) = mx.vjp(mx.logcumsumexp, [x], [g])
        expected = mx.array([0.5 + 0.7268488j, 0.5 + 0.2731512j])
        self.assertTrue(mx.allclose(dx, expected, atol=1e-6))

    def test_reverse(self):
        # reverse: y_1 = x_1 = 0, y_0 = log(e^i + 1), dx_j = sum_{i <= j}
        # g_i conj(e^(x_j - y_i)): dx_0 = g_0 (1 - 0.2731512i) / 2,
        # dx_1 = g_0 (1 + 0.2731512i) / 2 + g_1, with g = [2i, 5]
        x = mx.array([1j, 0j])
        g = mx.array([2j, 5 + 0j])
        f = lambda x: mx.logcumsumexp(x, reverse=True)
        _, (dx,) = mx.vjp(f, [x], [g])
        expected = mx.array([0.5463024 + 1j, 4.4536976 + 1j])
        self.assertTrue(mx.allclose(dx, expected, atol=1e-6))

    def test_large_range(self):
        # x = [100, 0]: e^(x_0 - y_1) = 1 / (1 + e^-100) = 1, e^(x_1 - y_1) = 0
        x = mx.array([100 + 0j, 0j])
        g = mx.array([0j, 1 + 0j])
        _, (dx,) = mx.vjp(mx.logcumsumexp, [x], [g])
        self.assertTrue(mx.allclose(dx, mx.array([1 + 0j, 0j]), atol=1e-6))

    def test_real_unchanged(self):
        # x = [0, 0]: dx_0 = g_0 + g_1 / 2, dx_1 = g_1 / 2
        x = mx.array([0.0, 0.0])
        _, (dx,) = mx.vjp(mx.logcumsumexp, [x], [mx.array([1.0, 1.0])])
        self.assertTrue(mx.allclose(dx, mx.array([1.5, 0.5])))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
