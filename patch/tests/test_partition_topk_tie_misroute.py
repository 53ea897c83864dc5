import unittest

import mlx.core as mx
import mlx_tests


def ascending(y):
    # The order within each side of kth is unspecified: put the output in
    # ascending order with a gather, so the function is the sorted lane.
    return mx.take_along_axis(y, mx.argsort(mx.stop_gradient(y)), axis=-1)


class TestPartitionVJP(mlx_tests.MLXTestCase):
    # Each output of partition (and topk) holds one input, so its cotangent
    # goes to that input: dx[order[p]] = g[p] for the ascending order of the
    # lane. Which of tied inputs an output holds cannot be seen in the values;
    # the cotangents of tied outputs go to the tied inputs, one each.

    def test_partition_untied_value(self):
        x = mx.array([0.0, 0.0, 1.0, 0.0])
        fun = lambda x: ascending(mx.partition(x, 0))
        # sorted: [0, 0, 0, 1]; the 1 gets the last cotangent
        _, (dx,) = mx.vjp(fun, [x], [mx.array([1.0, 1.0, 1.0, 5.0])])
        self.assertEqual(dx.tolist(), [1.0, 1.0, 5.0, 1.0])

        x = mx.array([0.0, -4.0, -8.0, 8.0, -4.0])
        _, (dx,) = mx.vjp(fun, [x], [mx.array([3.0, 4.0, 4.0, -4.0, -2.0])])
        self.assertEqual(dx.tolist(), [-4.0, 4.0, 3.0, -2.0, 4.0])

    def test_partition_broadcast_operand(self):
        # A broadcast operand (batch stride 0): each row is a lane of its own.
        # Ascending order of [3, 1, 2, 0, 5]: 3, 1, 2, 0, 4
        x = mx.broadcast_to(mx.array([[3.0, 1.0, 2.0, 0.0, 5.0]]), (2, 5))
        fun = lambda x: ascending(mx.partition(x, 3))
        g = mx.array([[1.0, 2.0, 3.0, 4.0, 5.0], [5.0, 4.0, 3.0, 2.0, 1.0]])
        (y,), (dx,) = mx.vjp(fun, [x], [g])
        self.assertEqual(y.tolist(), [[0.0, 1.0, 2.0, 3.0, 5.0]] * 2)
        self.assertEqual(
            dx.tolist(), [[4.0, 2.0, 3.0, 1.0, 5.0], [2.0, 4.0, 3.0, 5.0, 1.0]]
        )

    def test_partition_ties(self):
        # ascending order of [2, 1, 0, 1, 2]: 2, then 1 and 3 (tied), then 0
        # and 4 (tied)
        x = mx.array([2.0, 1.0, 0.0, 1.0, 2.0])
        g = mx.array([1.0, 2.0, 3.0, 4.0, 5.0])
        for kth in range(5):
            fun = lambda x: ascending(mx.partition(x, kth))
            _, (dx,) = mx.vjp(fun, [x], [g])
            dx = dx.tolist()
            self.assertEqual(dx[2], 1.0)
            self.assertEqual(sorted([dx[1], dx[3]]), [2.0, 3.0])
            self.assertEqual(sorted([dx[0], dx[4]]), [4.0, 5.0])
            # equal cotangents on the tied values: one answer
            _, (dx,) = mx.vjp(fun, [x], [mx.array([1.0, 2.0, 2.0, 3.0, 3.0])])
            self.assertEqual(dx.tolist(), [3.0, 2.0, 1.0, 2.0, 3.0])

    def test_partition_jvp(self):
        # The tangent of each output is the tangent of the input it holds
        x = mx.array([0.0, 0.0, 1.0, 0.0, -1.0])
        t = mx.array([1.0, 2.0, 3.0, 4.0, 5.0])
        (y,), (dy,) = mx.jvp(lambda x: mx.partition(x, 1), [x], [t])
        y, dy = y.tolist(), dy.tolist()
        self.assertEqual(dy[y.index(-1.0)], 5.0)
        self.assertEqual(dy[y.index(1.0)], 3.0)
        # the zeros hold inputs 0, 1, 3, one each
        self.assertEqual(sorted(d for v, d in zip(y, dy) if v == 0.0), [1.0, 2.0, 4.0])

    def test_topk(self):
        x = mx.array([0.0, 0.0, 1.0, 0.0])
        fun = lambda x: ascending(mx.topk(x, 3))
        _, (dx,) = mx.vjp(fun, [x], [mx.array([0.0, 0.0, 5.0])])
        self.assertEqual(dx.tolist(), [0.0, 0.0, 5.0, 0.0])

        x = mx.array([[8.0, 0.0, 4.0, 0.0], [8.0, 0.0, -4.0, 8.0]])
        fun = lambda x: ascending(mx.topk(x, 6, axis=None))
        g = mx.array([0.0, 0.0, -3.0, -2.0, -2.0, -2.0])
        _, (dx,) = mx.vjp(fun, [x], [g])
        self.assertEqual(dx.tolist(), [[-2.0, 0.0, -3.0, 0.0], [-2.0, 0.0, 0.0, -2.0]])

    def test_topk_ties(self):
        # Of tied values the largest are the last ones, as in argsort: the
        # top 1 of [5, 5, 1] is the second 5
        x = mx.array([5.0, 5.0, 1.0])
        _, (dx,) = mx.vjp(lambda x: mx.topk(x, 1), [x], [mx.array([2.0])])
        self.assertEqual(dx.tolist(), [0.0, 2.0, 0.0])

        fun = lambda x: ascending(mx.topk(x, 2))
        _, (dx,) = mx.vjp(fun, [x], [mx.array([2.0, 3.0])])
        self.assertEqual(dx.tolist(), [2.0, 3.0, 0.0])

    def test_long_lane(self):
        # A lane long enough for the kernels to partition, not insertion-sort;
        # a cotangent of 10 times the value in the ascending order gives every
        # element 10 times its value, however the ties are arranged.
        x = [
            3.0,
            1.0,
            4.0,
            1.0,
            5.0,
            9.0,
            2.0,
            6.0,
            5.0,
            3.0,
            5.0,
            8.0,
            9.0,
            7.0,
            9.0,
            3.0,
        ]
        g = mx.array([10.0 * v for v in sorted(x)])
        expected = [30.0, 10.0, 40.0, 10.0, 50.0, 90.0, 20.0, 60.0]
        expected += [50.0, 30.0, 50.0, 80.0, 90.0, 70.0, 90.0, 30.0]
        for kth in (0, 5, 8, 15):
            fun = lambda x: ascending(mx.partition(x, kth))
            _, (dx,) = mx.vjp(fun, [mx.array(x)], [g])
            self.assertEqual(dx.tolist(), expected)
        # the top 6: 9, 9, 9, 8, 7, 6
        fun = lambda x: ascending(mx.topk(x, 6))
        _, (dx,) = mx.vjp(fun, [mx.array(x)], [g[-6:]])
        expected = [0.0, 0.0, 0.0, 0.0, 0.0, 90.0, 0.0, 60.0]
        expected += [0.0, 0.0, 0.0, 80.0, 90.0, 70.0, 90.0, 0.0]
        self.assertEqual(dx.tolist(), expected)


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
