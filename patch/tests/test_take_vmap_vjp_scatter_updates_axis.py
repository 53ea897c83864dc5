import unittest

import mlx.core as mx
import mlx_tests


class TestScatterVmapUpdatesAxis(mlx_tests.MLXTestCase):
    # The VJP of take is a scatter_add; under vmap with the cotangent batched
    # on a later axis each example's cotangent must go to its own rows.

    def test_vmap_of_take_vjp(self):
        x = mx.zeros((2, 3))
        idx = mx.array([0, 2, 2])
        g = mx.arange(1, 13, dtype=mx.float32).reshape(2, 3, 2)

        def grad(g):
            return mx.vjp(lambda x: mx.take(x, idx, axis=1), [x], [g])[1][0]

        out = mx.vmap(grad, in_axes=2)(g)
        self.assertEqual(
            out.tolist(),
            [
                [[1.0, 0.0, 8.0], [7.0, 0.0, 20.0]],
                [[2.0, 0.0, 10.0], [8.0, 0.0, 22.0]],
            ],
        )

    def test_vmap_of_scatter_add_updates_axis(self):
        a = mx.zeros((4, 2))
        idx = mx.array([0, 3])
        u = mx.arange(12, dtype=mx.float32).reshape(2, 2, 3)
        out = mx.vmap(lambda u: a.at[idx].add(u), in_axes=2)(u)
        self.assertEqual(
            out.tolist(),
            [
                [[0.0, 3.0], [0.0, 0.0], [0.0, 0.0], [6.0, 9.0]],
                [[1.0, 4.0], [0.0, 0.0], [0.0, 0.0], [7.0, 10.0]],
                [[2.0, 5.0], [0.0, 0.0], [0.0, 0.0], [8.0, 11.0]],
            ],
        )


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
