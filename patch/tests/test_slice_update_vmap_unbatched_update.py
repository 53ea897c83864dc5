import unittest

import mlx.core as mx
import mlx_tests


class TestSliceUpdateVmapUnbatchedUpdate(mlx_tests.MLXTestCase):
    # vmap(f)(A) must equal stacking f(A[i]) over the batch: an update that
    # is not batched is written into every batch element.

    def test_dynamic_unbatched_update(self):
        a = mx.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
        u = mx.array([10.0, 20.0])
        start = mx.array([1])
        fun = lambda a: mx.slice_update(a, u, start, [0])
        want = [[1.0, 10.0, 20.0, 4.0], [5.0, 10.0, 20.0, 8.0]]
        self.assertEqual(mx.vmap(fun)(a).tolist(), want)
        self.assertEqual(mx.vmap(fun, in_axes=1)(a.T).tolist(), want)

    def test_static_unbatched_update(self):
        a = mx.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]])
        u = mx.array([10.0, 20.0])

        def assign(a):
            a = a + 0.0
            a[1:3] = u
            return a

        add = lambda a: a.at[1:3].add(u)
        self.assertEqual(
            mx.vmap(assign)(a).tolist(),
            [[1.0, 10.0, 20.0, 4.0], [5.0, 10.0, 20.0, 8.0]],
        )
        self.assertEqual(
            mx.vmap(add, in_axes=1)(a.T).tolist(),
            [[1.0, 12.0, 23.0, 4.0], [5.0, 16.0, 27.0, 8.0]],
        )

    def test_vmap_of_vjp(self):
        # da = g with the updated window zeroed; du = g summed over the rows
        # the lower rank update is broadcast to
        a = mx.zeros((2, 2, 3))
        u = mx.zeros((2, 2))
        g = mx.array([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]] * 2) * mx.array(
            [1.0, -2.0]
        ).reshape(2, 1, 1)
        start = mx.array([1])

        def grads(a, u, g):
            fun = lambda a, u: mx.slice_update(a, u, start, [1])
            return mx.vjp(fun, [a, u], [g])[1]

        da, du = mx.vmap(grads)(a, u, g)
        self.assertEqual(
            da.tolist(),
            [[[1.0, 0.0, 0.0], [4.0, 0.0, 0.0]], [[-2.0, 0.0, 0.0], [-8.0, 0.0, 0.0]]],
        )
        self.assertEqual(du.tolist(), [[7.0, 9.0], [-14.0, -18.0]])


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
