"""mx.argsort (MLX's ArgSort primitive) and mx.argpartition (ArgPartition), one function
each; params axis, kth (argpartition), form: "indices" or "weighted" (a * the indices).
argpartition's indices off the kth position are in no specified order, so its call
returns the kth position's index alone (axis kept), taken with mx.take."""
import mlx.core as mx


def argsort(operands, params):
    a = operands["a"]
    idx = mx.argsort(a, axis=params.get("axis", -1))
    return idx if params.get("form", "indices") == "indices" else a * idx


def argpartition(operands, params):
    a, kth, axis = operands["a"], params["kth"], params.get("axis", -1)
    idx = mx.take(mx.argpartition(a, kth, axis=axis), mx.array([kth]), axis=axis)
    return idx if params.get("form", "indices") == "indices" else a * idx
