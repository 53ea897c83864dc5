import unittest

import mlx.core as mx
import mlx_tests


class TestComplexCumprodGrad(mlx_tests.MLXTestCase):
    # y_j = prod_{k <= j} x_k is holomorphic; MLX's complex VJPs are
    # g * conj(f'): dx_i = sum_{j >= i} g_j conj(prod_{k <= j, k != i} x_k).

    def test_cumprod_vjp(self):
        # x = [1 + i, 2 - i], g = [1, 1]:
        # dx_0 = 1 + conj(2 - i) = 3 + i, dx_1 = conj(1 + i) = 1 - i
        x = mx.array([1 + 1j, 2 - 1j])
        _, (dx,) = mx.vjp(mx.cumprod, [x], [mx.array([1 + 0j, 1 + 0j])])
        self.assertTrue(mx.allclose(dx, mx.array([3 + 1j, 1 - 1j])))

    def test_cumprod_vjp_reverse_with_zero(self):
        # reverse: y = [x0 x1 x2, x1 x2, x2]; x = [1 + i, 0, i], g = 1:
        # dx_0 = conj(x1 x2) = 0, dx_1 = conj(x0 x2) + conj(x2) = -1 - 2i,
        # dx_2 = conj(x0 x1) + conj(x1) + 1 = 1
        x = mx.array([1 + 1j, 0j, 1j])
        f = lambda x: mx.cumprod(x, reverse=True)
        _, (dx,) = mx.vjp(f, [x], [mx.array([1 + 0j, 1 + 0j, 1 + 0j])])
        self.assertTrue(mx.allclose(dx, mx.array([0j, -1 - 2j, 1 + 0j])))

    def test_prod_second_order(self):
        # prod's VJP is conj(E) g, E_i = prod_{j != i} x_j; its VJP with
        # cotangent u is conj(sum_i u_i dE_i / dx_k). x = [a, b, c] =
        # [1 + i, 2, i], u = 1: [conj(c + b), conj(c + a), conj(b + a)]
        def dprod(x):
            _, (dx,) = mx.vjp(mx.prod, [x], [mx.array(1 + 0j)])
            return dx

        x = mx.array([1 + 1j, 2 + 0j, 1j])
        u = mx.array([1 + 0j, 1 + 0j, 1 + 0j])
        _, (d2,) = mx.vjp(dprod, [x], [u])
        self.assertTrue(mx.allclose(d2, mx.array([2 - 1j, 1 - 2j, 3 - 1j])))


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
