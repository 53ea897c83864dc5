"""A scenario is data: one JSON-serialisable record per call under test.

The same records feed the Python runner, the native C++ suite (exported as
JSON) and the validator, so there is exactly one list of cases.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from . import jsonio

# /2: strict JSON, non-finite numbers as {"nonfinite": ...} (jsonio); /1 files are still read.
SCHEMA = "mlx-vjpcheck/scenario/2"
READABLE = ("mlx-vjpcheck/scenario/1", SCHEMA)
# Defect classes that only exist on gather_mm / gather_qmm's sorted fast path.
SORTED_PATH_TAGS = frozenset({"left_selection", "broadcast_tail", "quantized_left", "rank2_segments"})


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
        return {"values": list(self.values), "shape": list(self.shape),
                "dtype": self.dtype, "views": json.loads(json.dumps(list(self.views)))}

    @staticmethod
    def from_dict(d: dict) -> "Tensor":
        return Tensor(tuple(d["values"]), tuple(d["shape"]), d.get("dtype", "float32"),
                      tuple(_freeze(v) for v in d.get("views", ())))


def _freeze(view: dict) -> dict:
    return {k: (tuple(tuple(x) if isinstance(x, list) else x for x in v)
                if isinstance(v, list) else v) for k, v in view.items()}


@dataclass(frozen=True)
class Scenario:
    name: str
    op: str
    operands: dict            # operand name -> Tensor, in the op's call order
    wrt: tuple                # differentiated operand names
    lhs_indices: Tensor | None = None
    rhs_indices: Tensor | None = None
    sorted_indices: bool = False
    params: dict = field(default_factory=dict)   # op parameters (bits, group_size, ...)
    cotangent: Tensor | None = None               # None means all ones
    objective: str = "vjp"    # "vjp" or "pair_loss" (0.5 * sum((Y0 - Y1)^2))
    fd_step: float | None = None                  # run the finite-difference check
    family: str = ""
    defect_tags: tuple = ()   # known defect classes this call hits when sorted
    description: str = ""

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["operands"] = {k: t.to_dict() for k, t in self.operands.items()}
        for key in ("lhs_indices", "rhs_indices", "cotangent"):
            d[key] = None if d[key] is None else d[key].to_dict()
        d["wrt"] = list(self.wrt)
        d["defect_tags"] = list(self.defect_tags)
        d["params"] = dict(self.params)
        return d

    @staticmethod
    def from_dict(d: dict) -> "Scenario":
        opt = lambda k: None if d.get(k) is None else Tensor.from_dict(d[k])  # noqa: E731
        known = {f.name for f in dataclasses.fields(Scenario)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown scenario fields: {sorted(unknown)}")
        return Scenario(
            name=d["name"], op=d["op"],
            operands={k: Tensor.from_dict(v) for k, v in d["operands"].items()},
            wrt=tuple(d["wrt"]), lhs_indices=opt("lhs_indices"),
            rhs_indices=opt("rhs_indices"), sorted_indices=bool(d.get("sorted_indices")),
            params=dict(d.get("params") or {}), cotangent=opt("cotangent"),
            objective=d.get("objective", "vjp"), fd_step=d.get("fd_step"),
            family=d.get("family", ""), defect_tags=tuple(d.get("defect_tags", ())),
            description=d.get("description", ""))

    @property
    def expects_defect(self) -> bool:
        """True when a known defect applies. The gather tags bite only on the sorted
        path; any other tag names a defect this call hits whatever its flags."""
        if not self.defect_tags:
            return False
        return self.sorted_indices or not set(self.defect_tags) <= SORTED_PATH_TAGS


def catalog_document(scenarios) -> dict:
    return {"schema": SCHEMA, "scenarios": [s.to_dict() for s in scenarios]}


def dump_catalog(scenarios) -> str:
    return jsonio.dumps(catalog_document(scenarios), indent=1, sort_keys=True)


def load_catalog(obj: Any) -> list:
    if isinstance(obj, str):
        obj = jsonio.loads(obj)
    if obj.get("schema") not in READABLE:
        raise ValueError(f"not a scenario catalog (schema {obj.get('schema')!r})")
    return [Scenario.from_dict(d) for d in obj["scenarios"]]
