import unittest

import mlx.core as mx
import mlx_tests


class TestGatherMMSortedVJP(mlx_tests.MLXTestCase):
    # Y[q] = A[i_q] B[j_q] (indices broadcast together, a missing one is
    # arange over its operand's batch), so
    #   dA[l] = sum_{q: i_q = l} G[q] B[j_q]^T,
    #   dB[l] = sum_{q: j_q = l} A[i_q]^T G[q].
    # sorted_indices only says that the one index array given is sorted.

    def test_repeated_left_indices(self):
        a = mx.array([2.0, 7.0]).reshape(2, 1, 1)
        b = mx.array([3.0, 5.0]).reshape(2, 1, 1)
        ids = mx.array([0, 0], mx.uint32)
        for sorted_indices in (True, False):
            fun = lambda a, b: mx.gather_mm(
                a, b, lhs_indices=ids, sorted_indices=sorted_indices
            )
            (y,), (da, db) = mx.vjp(fun, [a, b], [mx.ones((2, 1, 1))])
            self.assertEqual(y.reshape(-1).tolist(), [6.0, 10.0])
            self.assertEqual(da.reshape(-1).tolist(), [8.0, 0.0])
            self.assertEqual(db.reshape(-1).tolist(), [2.0, 2.0])

    def test_broadcast_left_operand(self):
        # a is a slice of a longer buffer: only its one matrix may be read
        backing = mx.array([2.0, 101.0, 202.0]).reshape(3, 1, 1)
        mx.eval(backing)
        a = backing[:1]
        b = mx.array([3.0, 5.0, 7.0]).reshape(3, 1, 1)
        ids = mx.array([0, 1, 2], mx.uint32)
        fun = lambda b: mx.gather_mm(a, b, rhs_indices=ids, sorted_indices=True).sum()
        self.assertEqual(mx.grad(fun)(b).reshape(-1).tolist(), [2.0, 2.0, 2.0])

    def test_right_indices_broadcast_to_left_batch(self):
        # Sorted right indices [0, 0, 1] repeat over the left operand's
        # leading batch axis: [[0, 0, 1], [0, 0, 1]] is no longer sorted
        a = mx.arange(1, 7, dtype=mx.float32).reshape(2, 3, 1, 1)
        b = mx.array([1.0, 10.0]).reshape(2, 1, 1)
        ids = mx.array([0, 0, 1], mx.uint32)
        fun = lambda a, b: mx.gather_mm(a, b, rhs_indices=ids, sorted_indices=True)
        (y,), (da, db) = mx.vjp(fun, [a, b], [mx.ones((2, 3, 1, 1))])
        self.assertEqual(y.reshape(-1).tolist(), [1, 2, 30, 4, 5, 60])
        self.assertEqual(da.reshape(-1).tolist(), [1, 1, 10, 1, 1, 10])
        self.assertEqual(db.reshape(-1).tolist(), [12.0, 9.0])

    def test_index_ranks_and_left_without_batch(self):
        # Right indices of rank 2
        a = mx.arange(1, 5, dtype=mx.float32).reshape(2, 2, 1, 1)
        b = mx.array([1.0, 2.0, 3.0]).reshape(3, 1, 1)
        ids = mx.array([[0, 1], [1, 2]], mx.uint32)
        fun = lambda a, b: mx.gather_mm(a, b, rhs_indices=ids, sorted_indices=True)
        (y,), (da, db) = mx.vjp(fun, [a, b], [mx.ones((2, 2, 1, 1))])
        self.assertEqual(y.reshape(-1).tolist(), [1.0, 4.0, 6.0, 12.0])
        self.assertEqual(da.reshape(-1).tolist(), [1.0, 2.0, 2.0, 3.0])
        self.assertEqual(db.reshape(-1).tolist(), [1.0, 5.0, 4.0])

        # Right indices of rank 0
        fun = lambda b: mx.gather_mm(
            a[0, :1], b, rhs_indices=mx.array(2, mx.uint32), sorted_indices=True
        ).sum()
        self.assertEqual(mx.grad(fun)(b).reshape(-1).tolist(), [0.0, 0.0, 1.0])

        # A left operand without batch axes
        a = mx.array([[1.0, 2.0]])
        b = mx.array([[[1.0], [1.0]], [[2.0], [3.0]]])
        ids = mx.array([0, 1, 1], mx.uint32)
        for sorted_indices in (True, False):
            fun = lambda a, b: mx.gather_mm(
                a, b, rhs_indices=ids, sorted_indices=sorted_indices
            )
            (y,), (da, db) = mx.vjp(fun, [a, b], [mx.ones((3, 1, 1))])
            self.assertEqual(y.reshape(-1).tolist(), [3.0, 8.0, 8.0])
            self.assertEqual(da.tolist(), [[5.0, 7.0]])
            self.assertEqual(db.reshape(-1).tolist(), [1.0, 2.0, 2.0, 4.0])

    def test_empty_dimensions(self):
        ids = mx.array([0, 1, 2], mx.uint32)
        for sorted_indices in (True, False):
            # K = 0: the product is zero and both gradients are empty
            cases = [
                (mx.zeros((3, 2, 0)), mx.zeros((0, 4)), {"lhs_indices": ids}),
                (mx.zeros((2, 0)), mx.zeros((3, 0, 4)), {"rhs_indices": ids}),
            ]
            for a, b, kwargs in cases:
                fun = lambda a, b: mx.gather_mm(
                    a, b, sorted_indices=sorted_indices, **kwargs
                )
                (y,), (da, db) = mx.vjp(fun, [a, b], [mx.ones((3, 2, 4))])
                mx.eval(y, da, db)
                self.assertEqual(y.tolist(), mx.zeros((3, 2, 4)).tolist())
                self.assertEqual(da.shape, a.shape)
                self.assertEqual(db.shape, b.shape)

            # N = 0: the product is empty and the gradients zero or empty
            cases = [
                (mx.ones((3, 2, 5)), mx.ones((5, 0)), {"lhs_indices": ids}),
                (mx.ones((2, 5)), mx.ones((3, 5, 0)), {"rhs_indices": ids}),
            ]
            for a, b, kwargs in cases:
                fun = lambda a, b: mx.gather_mm(
                    a, b, sorted_indices=sorted_indices, **kwargs
                )
                (y,), (da, db) = mx.vjp(fun, [a, b], [mx.ones((3, 2, 0))])
                mx.eval(y, da, db)
                self.assertEqual(y.shape, (3, 2, 0))
                self.assertEqual(da.tolist(), mx.zeros(a.shape).tolist())
                self.assertEqual(db.shape, b.shape)

    def test_gather_qmm_repeated_left_indices(self):
        # Codes all 1 (4 bits), scales 1, biases 2 and 4: W0 = 3, W1 = 5
        w_q = mx.full((2, 32, 4), 0x11111111, mx.uint32)
        ids = mx.array([0, 0], mx.uint32)
        for dtype in (mx.float32, mx.float16):
            x = mx.array([2.0] * 32 + [7.0] * 32, dtype).reshape(2, 1, 32)
            scales = mx.ones((2, 32, 1), dtype)
            biases = mx.array([2.0, 4.0], dtype).reshape(2, 1, 1)
            biases = mx.broadcast_to(biases, (2, 32, 1))
            for sorted_indices in (True, False):
                fun = lambda x, s, b: mx.gather_qmm(
                    x,
                    w_q,
                    s,
                    b,
                    lhs_indices=ids,
                    transpose=True,
                    group_size=32,
                    bits=4,
                    sorted_indices=sorted_indices,
                )
                (y,), (dx, ds, db) = mx.vjp(
                    fun, [x, scales, biases], [mx.ones((2, 1, 32), dtype)]
                )
                self.assertEqual(dx.dtype, dtype)
                self.assertEqual(y[:, 0, 0].tolist(), [192.0, 320.0])
                self.assertEqual(dx[:, 0, 0].tolist(), [256.0, 0.0])
                self.assertEqual(ds[:, 0, 0].tolist(), [64.0, 64.0])
                self.assertEqual(db[:, 0, 0].tolist(), [64.0, 64.0])

    def test_second_order_with_sorted_left_indices(self):
        # h(a, b, g) = <u, J^T g> is bilinear: dh/da[q] = g[q] ub^T,
        # dh/db = sum_q ua[q]^T g[q], dh/dg[q] = ua[q] b + a[q] ub
        a = mx.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).reshape(3, 1, 2)
        b = mx.array([1.0, 2.0]).reshape(1, 2, 1)
        g = mx.array([1.0, 2.0, 3.0]).reshape(3, 1, 1)
        ua = mx.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0]).reshape(3, 1, 2)
        ub = mx.array([1.0, -1.0]).reshape(1, 2, 1)
        ids = mx.array([0, 1, 2], mx.uint32)
        fun = lambda a, b: mx.gather_mm(a, b, lhs_indices=ids, sorted_indices=True)

        def h(a, b, g):
            da, db = mx.vjp(fun, [a, b], [g])[1]
            return (ua * da).sum() + (ub * db).sum()

        da, db, dg = mx.grad(h, argnums=(0, 1, 2))(a, b, g)
        self.assertEqual(da.reshape(-1).tolist(), [1.0, -1.0, 2.0, -2.0, 3.0, -3.0])
        self.assertEqual(db.reshape(-1).tolist(), [4.0, 5.0])
        self.assertEqual(dg.reshape(-1).tolist(), [0.0, 1.0, 2.0])

    def test_gather_qmm_left_without_batch(self):
        # Codes all 1, scales 1, biases 2 and 4: W0 = 3, W1 = 5. A 2-D x and
        # repeated left indices: dx = W0 + W1
        w_q = mx.full((2, 1, 4), 0x11111111, mx.uint32)
        scales = mx.ones((2, 1, 1))
        biases = mx.array([2.0, 4.0]).reshape(2, 1, 1)
        ids = mx.array([0, 0], mx.uint32)
        fun = lambda x, s, b: mx.gather_qmm(
            x,
            w_q,
            s,
            b,
            lhs_indices=ids,
            transpose=True,
            group_size=32,
            bits=4,
            sorted_indices=True,
        )
        x = mx.ones((1, 32))
        (y,), (dx, ds, db) = mx.vjp(fun, [x, scales, biases], [mx.ones((2, 1, 1))])
        self.assertEqual(y.reshape(-1).tolist(), [96.0, 160.0])
        self.assertEqual(dx.tolist(), [[8.0] * 32])
        self.assertEqual(ds.reshape(-1).tolist(), [32.0, 32.0])
        self.assertEqual(db.reshape(-1).tolist(), [32.0, 32.0])

    def test_gather_qmm_rank3_left_indices(self):
        # Codes all 1, scales 1, biases 2, 4, 6: W0 = 3, W1 = 5, W2 = 7.
        # Left indices [[[0, 0, 2]]] against the default right [0, 1, 2]
        w_q = mx.full((3, 1, 4), 0x11111111, mx.uint32)
        scales = mx.ones((3, 1, 1))
        biases = mx.array([2.0, 4.0, 6.0]).reshape(3, 1, 1)
        ids = mx.array([[[0, 0, 2]]], mx.uint32)
        fun = lambda x, s, b: mx.gather_qmm(
            x,
            w_q,
            s,
            b,
            lhs_indices=ids,
            transpose=True,
            group_size=32,
            bits=4,
            sorted_indices=True,
        )
        x = mx.array([1.0] * 32 + [2.0] * 32 + [3.0] * 32).reshape(3, 1, 32)
        (y,), (dx, ds, db) = mx.vjp(
            fun, [x, scales, biases], [mx.ones((1, 1, 3, 1, 1))]
        )
        self.assertEqual(y.reshape(-1).tolist(), [96.0, 160.0, 672.0])
        self.assertEqual(dx[:, 0, 0].tolist(), [8.0, 0.0, 7.0])
        self.assertEqual(ds.reshape(-1).tolist(), [32.0, 32.0, 96.0])
        self.assertEqual(db.reshape(-1).tolist(), [32.0, 32.0, 96.0])

    def test_gather_qmm_broadcast_left_operand(self):
        # x is a slice of a longer buffer: only its one matrix may be read
        w_q = mx.full((3, 1, 4), 0x11111111, mx.uint32)
        scales = mx.ones((3, 1, 1))
        biases = mx.array([2.0, 4.0, 6.0]).reshape(3, 1, 1)
        backing = mx.array([1.0] * 32 + [40.0] * 32).reshape(2, 1, 32)
        mx.eval(backing)
        x = backing[:1]
        ids = mx.array([0, 1, 2], mx.uint32)
        fun = lambda x, s, b: mx.gather_qmm(
            x,
            w_q,
            s,
            b,
            rhs_indices=ids,
            transpose=True,
            group_size=32,
            bits=4,
            sorted_indices=True,
        )
        (y,), (dx, ds, db) = mx.vjp(fun, [x, scales, biases], [mx.ones((3, 1, 1))])
        self.assertEqual(y.reshape(-1).tolist(), [96.0, 160.0, 224.0])
        self.assertEqual(dx.tolist(), [[[15.0] * 32]])
        self.assertEqual(ds.reshape(-1).tolist(), [32.0, 32.0, 32.0])
        self.assertEqual(db.reshape(-1).tolist(), [32.0, 32.0, 32.0])

    def test_gather_qmm_empty_rows(self):
        # M = 0: an empty product, zero gradients for the scales and biases
        w_q = mx.full((2, 8, 4), 0x11111111, mx.uint32)
        scales = mx.ones((2, 8, 1))
        biases = mx.ones((2, 8, 1))
        ids = mx.array([1, 0], mx.uint32)
        fun = lambda x, s, b: mx.gather_qmm(
            x, w_q, s, b, rhs_indices=ids, transpose=True, group_size=32, bits=4
        )
        x = mx.ones((2, 0, 32))
        (y,), (dx, ds, db) = mx.vjp(fun, [x, scales, biases], [mx.ones((2, 0, 8))])
        self.assertEqual(y.tolist(), [[], []])
        self.assertEqual(dx.tolist(), [[], []])
        self.assertEqual(ds.tolist(), mx.zeros((2, 8, 1)).tolist())
        self.assertEqual(db.tolist(), mx.zeros((2, 8, 1)).tolist())


if __name__ == "__main__":
    mlx_tests.MLXTestRunner()
