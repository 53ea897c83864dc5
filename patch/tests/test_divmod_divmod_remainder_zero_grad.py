import unittest

import mlx.core as mx
import mlx_tests


class TestDivModGrad(mlx_tests.MLXTestCase):
    # divmod(a, b) = (q, r), q = floor(a / b), r = a - b q. q is piecewise
    # constant (derivative 0); dr/da = 1, dr/db = -q. So with cotangents
    # (gq, gr): da = gr, db = -q gr; the tangent of r is ta - q tb.
    # a = [7, -7], b = [2, 2]: q = [3, -4].

    def test_vjp(self):
        a = mx.array([7.0, -7.0])
        b = mx.array([2.0, 2.0])
        _, (da, db) = mx.vjp(
            mx.divmod, [a, b], [mx.array([5.0, 5.0]), mx.array([1.0, 1.0])]
        )
        self.assertEqual(da.tolist(), [1.0, 1.0])
        self.assertEqual(db.tolist(), [-3.0, 4.0])

        # The remainder alone, as mx.remainder
        grad = mx.grad(lambda a, b: mx.divmod(a, b)[1].sum(), argnums=(0, 1))
        da, db = grad(a, b)
        self.assertEqual(da.tolist(), [1.0, 1.0])
        self.assertEqual(db.tolist(), [-3.0, 4.0])

    def test_jvp(self):
        a = mx.array([7.0, -7.0])
        b = mx.array([2.0, 2.0])
        _, (tq, tr) = mx.jvp(mx.divmod, [a, b], [mx.ones(2), mx.ones(2)])
        self.assertEqual(tq.tolist(), [0.0, 0.0])
        self.assertEqual(tr.tolist(), [-2.0, 5.0])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
