"""Writing an op's MLX call for given params as one Python expression, the way a
maintainer writes it by hand (OpInfo.call_expression): literal params inlined,
integer operands converted where they are used. Text only.

`names` (operand name -> variable name in the script) decides every operand's
spelling; integer operands are int64 numpy arrays there, floating ones MLX
arrays. The expression is the body of `def f(<wrt>): return <expression>` in a
reproducer.
"""
from __future__ import annotations

import json


def lit(v) -> str:
    """A Python literal: strings in double quotes, lists and tuples element by element."""
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(lit(x) for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(lit(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return repr(v)


def index(var: str, dtype: str) -> str:
    """An int64 numpy operand converted to the MLX dtype the call hands MLX."""
    return f"mx.array({var}, dtype=mx.{dtype})"


def slice_text(spec) -> str:
    """One subscript entry from an int or [start, stop, step] (None allowed): 2, 1:3, ::-1, :."""
    if isinstance(spec, int):
        return str(spec)
    start, stop, step = (list(spec) + [None, None, None])[:3]
    text = ("" if start is None else str(start)) + ":" + ("" if stop is None else str(stop))
    return text + ("" if step is None else f":{step}")


def subscript(entries) -> str:
    """A subscript from already written entries: [2, ::-1]."""
    return "[" + ", ".join(entries) + "]"


def call(head: str, *args, **kwargs) -> str:
    """head(args, key=value...), the values already written as text; on one line, as the
    reproducer's literal inputs are (its length is counted in lines)."""
    return f"{head}({', '.join(list(args) + [f'{k}={v}' for k, v in kwargs.items()])})"
