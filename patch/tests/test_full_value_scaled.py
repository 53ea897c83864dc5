import unittest

import mlx.core as mx
import mlx_tests


class TestFullValueGrad(mlx_tests.MLXTestCase):
    # y = full(shape, v) copies v (broadcast) into every element, so dv is the
    # sum of the cotangent over the copies of each element of v, whatever v
    # is, and the derivative of that in v is 0.

    def test_scalar_value(self):
        _, (dv,) = mx.vjp(
            lambda v: mx.full((2, 3), v), [mx.array(2.0)], [mx.ones((2, 3))]
        )
        self.assertEqual(dv.item(), 6.0)

    def test_row_value(self):
        g = mx.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        _, (dv,) = mx.vjp(
            lambda v: mx.full((2, 3), v), [mx.array([1.0, -2.0, 3.0])], [g]
        )
        self.assertEqual(dv.tolist(), [5.0, 7.0, 9.0])

    def test_zero_value(self):
        _, (dv,) = mx.vjp(lambda v: mx.full((4,), v), [mx.array(0.0)], [mx.ones((4,))])
        self.assertEqual(dv.item(), 4.0)

    def test_second_order(self):
        # value_scaled_second_order: with v = 1 the first order is right, but
        # the VJP must not depend on v.
        def dv(v):
            _, (d,) = mx.vjp(lambda v: mx.full((2,), v), [v], [mx.ones((2,))])
            return d

        self.assertEqual(dv(mx.array(1.0)).item(), 2.0)
        self.assertEqual(mx.grad(dv)(mx.array(1.0)).item(), 0.0)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
