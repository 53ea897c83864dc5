"""A scenario is data: one JSON-serialisable call record (after PyTorch's
SampleInput), shared by the runner, the fuzzer, the gate and the validator.

An op receives named operands and params, nothing else: index arrays are
integer operands like any other (absent when MLX's default applies), and a
flag such as gather_mm's `sorted_indices` is a param of the ops that have it.

A scenario names its op (`op`, what is written) and, once bound, carries the
op's record (`info`, never written): the cases stage binds every scenario it
hands out, so later stages read `s.info` instead of looking the op up again.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from . import jsonio

# /3: the op-agnostic call record (index arrays are operands, flags are params).
SCHEMA = "mlx-vjpcheck/scenario/3"
OLD_SCHEMAS = ("mlx-vjpcheck/scenario/1", "mlx-vjpcheck/scenario/2")
OBJECTIVES = ("vjp", "pair_loss")


class SchemaError(ValueError):
    """A record of a schema version this release does not read (one line)."""


def refuse_old(schema, what: str, current: str) -> None:
    """One line naming the version, for every kind of file the harness reads."""
    raise SchemaError(f"{what} schema {schema!r} is not read by this release (it reads {current}): "
                      f"it was written by mlx-vjpcheck < 0.3; re-create it with this version")


@dataclass(frozen=True)
class Tensor:
    """Row-major storage plus the views that turn it into the logical operand.

    `views` lets a scenario say "a transposed / strided / sliced window onto a
    larger buffer", which is how the backing-tail defect is exposed: the
    reference only ever sees the logical value.
    """

    values: tuple
    shape: tuple
    dtype: str = "float32"
    views: tuple = ()

    def to_dict(self) -> dict:
        # a complex64 tensor's elements are (re, im) pairs, written as [re, im]
        return {"values": [list(v) if isinstance(v, tuple) else v for v in self.values],
                "shape": list(self.shape), "dtype": self.dtype,
                "views": json.loads(json.dumps(list(self.views)))}

    @staticmethod
    def from_dict(d: dict) -> "Tensor":
        values = tuple(d["values"])
        # Lists among the values (complex pairs) become tuples; a real tensor has none, and
        # finding that out at C speed matters: the validator reads ~300,000 values this way.
        if any(map(isinstance, values, repeat(list))):
            values = tuple(tuple(v) if isinstance(v, list) else v for v in values)
        return Tensor(values, tuple(d["shape"]), d.get("dtype", "float32"),
                      tuple(_freeze(v) for v in d.get("views", ())))


def _freeze(view: dict) -> dict:
    return {k: (tuple(tuple(x) if isinstance(x, list) else x for x in v)
                if isinstance(v, list) else v) for k, v in view.items()}


@dataclass(frozen=True)
class Scenario:
    # Identity: a unique name, and the op by its registered name.
    name: str
    op: str

    # The call: operand name -> Tensor (index arrays and other integer operands
    # included; an optional operand left out takes MLX's default), the
    # differentiated operands, and the op's params (flags, axes, modes, ...).
    operands: dict
    wrt: tuple
    params: dict = field(default_factory=dict)

    # What is differentiated: the cotangent (None: all ones) of a plain VJP, or
    # the scalar objective "pair_loss" (0.5 * sum((Y0 - Y1)^2)); fd_step asks
    # for elementwise finite differences through MLX's own forward.
    cotangent: Tensor | None = None
    objective: str = "vjp"
    fd_step: float | None = None

    # Labels: the call form, the known defect classes this call hits (the op
    # record says when a tag bites), one line for people.
    family: str = ""
    defect_tags: tuple = ()
    description: str = ""

    # An error input (OpInfo.error_inputs): MLX's forward must refuse this call,
    # and the VJP must refuse it too (the "refusal" oracle). Written only when true.
    must_refuse: bool = False

    # The op record, bound by the cases stage; not part of the data.
    info: Any = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "info"}
        d["operands"] = {k: t.to_dict() for k, t in self.operands.items()}
        d["cotangent"] = None if self.cotangent is None else self.cotangent.to_dict()
        d["wrt"] = list(self.wrt)
        d["defect_tags"] = list(self.defect_tags)
        d["params"] = json.loads(json.dumps(self.params))
        if not self.must_refuse:
            del d["must_refuse"]
        return d

    @staticmethod
    def from_dict(d: dict, info=None) -> "Scenario":
        unknown = set(d) - _FIELDS
        if unknown:
            raise ValueError(f"unknown scenario fields: {sorted(unknown)}")
        cot = d.get("cotangent")
        return Scenario(
            name=d["name"], op=d["op"],
            operands={k: Tensor.from_dict(v) for k, v in d["operands"].items()},
            wrt=tuple(d["wrt"]), params=dict(d.get("params") or {}),
            cotangent=None if cot is None else Tensor.from_dict(cot),
            objective=d.get("objective", "vjp"), fd_step=d.get("fd_step"),
            family=d.get("family", ""), defect_tags=tuple(d.get("defect_tags", ())),
            description=d.get("description", ""), must_refuse=d.get("must_refuse", False), info=info)

    def bound(self, info) -> "Scenario":
        """This scenario carrying its op record (checked against the name)."""
        if info.name != self.op:
            raise ValueError(f"scenario {self.name!r} is of op {self.op!r}, not {info.name!r}")
        return dataclasses.replace(self, info=info)

    def _info(self):
        """The op record; a scenario that was never bound is a programming error."""
        if self.info is None:
            raise RuntimeError(f"scenario {self.name!r} is not bound to its op record "
                               "(bind it with harness.cases.bind)")
        return self.info

    @property
    def expects_defect(self) -> bool:
        """True when one of its defect tags bites under its params (the op says when)."""
        return self._info().expects_defect(self.defect_tags, self.params)

    def expects_defect_under(self, oracles) -> bool:
        """expects_defect where only `oracles` (names) run: a class only a transform
        oracle shows is not expected of a first-order check (the native C++ suite)."""
        return self._info().expects_defect(self.defect_tags, self.params, tuple(oracles))

    @property
    def kills_process(self) -> bool:
        """A known defect of this call kills the process (only a worker may run it)."""
        info = self._info()
        return info.expects_defect(tuple(t for t in self.defect_tags if t in info.fatal_tags), self.params)

    @property
    def dtype(self) -> str:
        """The floating dtype the call runs in: its first differentiable operand's."""
        return self.operands[self._info().differentiable[0]].dtype


# The fields a scenario's dict may have (every field but the op record it is bound to).
_FIELDS = frozenset(f.name for f in dataclasses.fields(Scenario)) - {"info"}


def catalog_document(scenarios) -> dict:
    return {"schema": SCHEMA, "scenarios": [s.to_dict() for s in scenarios]}


def dump_catalog(scenarios) -> str:
    return jsonio.dumps(catalog_document(scenarios), indent=1, sort_keys=True)


def load_catalog(obj: Any) -> list:
    """Unbound scenarios of a catalog document (the cases stage binds them)."""
    if isinstance(obj, str):
        obj = jsonio.loads(obj)
    schema = obj.get("schema") if isinstance(obj, dict) else None
    if schema in OLD_SCHEMAS:
        refuse_old(schema, "scenario catalog", SCHEMA)
    if schema != SCHEMA:
        raise ValueError(f"not a scenario catalog (schema {schema!r})")
    return [Scenario.from_dict(d) for d in obj["scenarios"]]
