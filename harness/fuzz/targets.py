"""Fuzz targets: the registered ops that declare a strategy, as hypothesis
strategies of Scenario records. Knows no op by name."""
from __future__ import annotations

import random

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis import strategies as st

from .. import ops
from ..core.draw import dtype_table


def names() -> list:
    """Every registered op that can be fuzzed, in registry order."""
    return [name for name, info in ops.registry().items() if info.strategy is not None]


def strategy(op: str, dtypes) -> st.SearchStrategy:
    """The op's cases, bound to its record as they are drawn."""
    info = ops.get(op)
    return st.composite(lambda draw: info.strategy(draw, tuple(dtypes)).bound(info))()


def op_dtypes(op: str, supported) -> tuple:
    """The dtypes an op's cases are drawn in: those MLX's forward accepts here
    (`supported`, probed by the campaign) that the op record declares (OpInfo.dtypes),
    and complex64 where the record says the op takes it (OpInfo.complex); float32
    when nothing else is left. The strategy receives them and builds its tensors."""
    info = ops.get(op)
    out = [d for d in (supported or ("float32",)) if d in info.dtypes] or ["float32"]
    if info.complex and "complex64" not in out:
        out.append("complex64")
    return tuple(out)


def weight(op: str) -> int:
    """The op's share of the exploration turns (OpInfo.fuzz_weight)."""
    return ops.get(op).fuzz_weight


def per_op(targets, dtypes: dict) -> dict:
    """Each op's strategy over its dtypes (the campaign explores one op a turn)."""
    return {op: strategy(op, dtype_table(op_dtypes(op, dtypes.get(op)))) for op in targets}


def cases(targets, dtypes: dict) -> st.SearchStrategy:
    """One strategy over the chosen ops, drawn by their fuzz_weight; shrinks towards
    the first op."""
    table = [op for op in targets for _ in range(weight(op))]
    built = per_op(targets, dtypes)

    @st.composite
    def one(draw):
        return draw(built[draw(st.sampled_from(table))])
    return one()


def minimal_case(op: str, dtype: str):
    """The simplest case of a target in one dtype that takes the op's index path
    (deterministic). Calls without index arrays may take a plain path with wider
    dtype support, so they do not tell whether a dtype is supported."""
    info = ops.get(op)
    optional_ints = set(info.optional_operands) & set(info.integer_operands)
    indexed = lambda s: not optional_ints or bool(optional_ints & set(s.operands))  # noqa: E731
    return find(strategy(op, (dtype,)), indexed, random=random.Random(0),
                settings=settings(database=None, max_examples=50, phases=(Phase.generate,),
                                  suppress_health_check=list(HealthCheck)))
