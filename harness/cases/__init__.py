"""What to run and what it must give (numpy only): the catalog gathered from
every op, selection by name, scenarios from files, and the expected values
from the float64 references. Every scenario this stage hands out is bound to
its op record (`bind`), so the stages after it never look an op up again."""
from __future__ import annotations

from .. import ops


class UnboundOp(ValueError):
    """A scenario names an op that is not registered, or is not a call of it."""


def bind(s):
    """The scenario carrying its op record; refuses a call the op cannot take."""
    if s.info is not None:
        return s
    try:
        info = ops.get(s.op)
    except ValueError as e:
        raise UnboundOp(f"scenario {s.name!r}: {e}") from None
    problems = info.call_problems(s)
    if problems:
        raise UnboundOp(f"scenario {s.name!r} is not a call of {s.op}: {'; '.join(problems)}")
    return s.bound(info)
