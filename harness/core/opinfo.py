"""The op record: everything the harness knows about one op, on one dataclass
(after PyTorch's OpInfo).

Each op module in `harness/ops/` declares one `OpInfo` (the gather family
declares several) and `harness/ops/__init__.py` lists them explicitly. Generic
code (catalog, runner, validator, fuzzer, reproducers, native export)
consumes the records and never names an op itself.

Parts that need mlx or hypothesis are named as "module:attr" strings and only
imported when a command runs MLX or fuzzes, so everything on the validation
path imports numpy alone.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Callable

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_PATH = re.compile(r"^\.*[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
INDEX_ARRAYS = ("lhs", "rhs")
# What a reproducer snippet must define (see harness/fuzz/repro.py).
REPRO_NAMES = ("INTEGER_OPERANDS", "def ref_forward", "def ref_vjp", "def mlx_call")


class OpInfoError(ValueError):
    """An inconsistent op record (a programming error in an op module)."""


@dataclass(frozen=True, kw_only=True)
class OpInfo:
    # Identity: the name scenarios use in their `op` field, and one line for listings.
    name: str
    summary: str = ""

    # Call signature. Operands in call order; the differentiable ones (a VJP may be
    # taken with respect to any non-empty subset); integer operands, held fixed and
    # never perturbed (quantization codes, index operands); the gather index arrays
    # the call takes ("lhs", "rhs"); whether it has MLX's sorted_indices flag.
    operands: tuple
    differentiable: tuple
    integer_operands: tuple = ()
    index_arrays: tuple = ()
    has_sorted_flag: bool = False

    # The float64 oracle, numpy only: reference(inputs, lhs, rhs, params) -> Y and
    # reference_vjp(inputs, G, lhs, rhs, params) -> {operand: gradient}. Without a
    # hand-written VJP, core/numeric.py differentiates the reference (complex step when
    # it is analytic in its floating inputs, else extrapolated central differences),
    # within a stated error bound. `exact`: on the small-integer inputs of the catalog
    # and the strategy, float32 arithmetic is exact (sums of integer products), so the
    # fuzzer may also demand exact zeros wherever the reference is exactly zero.
    reference: Callable
    reference_vjp: Callable | None = None
    analytic: bool = False
    exact: bool = False
    # `multilinear`: linear in each operand separately (matmuls, gathers, scans by sums,
    # convolutions), so along any line the forward is a polynomial of degree <= 2 and a
    # central difference with a large step is exact: the fuzzer's finite-difference
    # oracle runs only for these.
    multilinear: bool = False

    # The call under test: "module:attr" of mlx_call(operands, lhs, rhs, sorted, params),
    # operands as mlx arrays (integer operands as numpy int64).
    mlx_call: str

    # Catalog: () -> flag-neutral scenarios; ops with the sorted flag get each one
    # sorted and unsorted.
    scenarios: Callable | None = None

    # Fuzzing: strategy(draw, dtypes) -> Scenario, built from harness.core.draw (which
    # imports hypothesis only when drawing); how often the op is drawn relative to others.
    strategy: Callable | None = None
    fuzz_weight: int = 1

    # Reproducer: standalone source (mlx + numpy only) defining INTEGER_OPERANDS,
    # ref_forward, ref_vjp and mlx_call, written again from the maths.
    repro_source: str | None = None

    # The native C++ suite implements this op (native/src/mlx_ops.cpp, reference.cpp).
    native: bool = False

    # False: MLX defines no gradient for this op. Its scenarios check the forward, and
    # that asking for a VJP raises (check "no_vjp"): recorded as such, never as a defect.
    # Nothing else (fuzzing, reproducers, mutants) applies.
    has_vjp: bool = True

    def __post_init__(self):
        for problem in self._problems():
            raise OpInfoError(f"OpInfo {self.name!r}: {problem}")

    def _problems(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            yield "field name: lower-case letters, digits and underscores, starting with a letter"
        yield from self._signature_problems()
        if not callable(self.reference):
            yield "field reference: not callable"
        if self.reference_vjp is not None and not callable(self.reference_vjp):
            yield "field reference_vjp: not callable"
        for field in ("scenarios", "strategy"):
            if getattr(self, field) is not None and not callable(getattr(self, field)):
                yield f"field {field}: not callable"
        if not (isinstance(self.mlx_call, str) and _PATH.match(self.mlx_call)):
            yield f"field mlx_call: {self.mlx_call!r} is not a 'module:attr' path"
        yield from self._fuzz_problems()

    def _signature_problems(self):
        ops, diff, ints = tuple(self.operands), tuple(self.differentiable), tuple(self.integer_operands)
        if not ops or len(set(ops)) != len(ops):
            yield "field operands: empty or repeated names"
        if not diff or not set(diff) <= set(ops):
            yield f"field differentiable: {diff} is empty or not among the operands {ops}"
        if not set(ints) <= set(ops) or set(ints) & set(diff):
            yield f"field integer_operands: {ints} must be operands that are not differentiable"
        if not set(self.index_arrays) <= set(INDEX_ARRAYS):
            yield f"field index_arrays: {self.index_arrays} is not a subset of {INDEX_ARRAYS}"
        if self.has_sorted_flag and not self.index_arrays:
            yield "field has_sorted_flag: the sorted flag needs index arrays"

    def _fuzz_problems(self):
        if not self.has_vjp and (self.strategy is not None or self.repro_source is not None):
            yield "field has_vjp: an op without a VJP has no fuzz strategy or reproducer"
        if not isinstance(self.fuzz_weight, int) or self.fuzz_weight < 1:
            yield f"field fuzz_weight: {self.fuzz_weight!r} is not a positive integer"
        if self.strategy is not None and self.repro_source is None:
            yield "field repro_source: a fuzzed op needs a reproducer snippet for its findings"
        if self.repro_source is not None:
            missing = [n for n in REPRO_NAMES if n not in self.repro_source]
            if missing:
                yield f"field repro_source: does not define {', '.join(missing)}"

    def catalog_scenarios(self) -> list:
        return list(self.scenarios()) if self.scenarios else []


def resolve(path: str):
    """Import "module:attr". Relative module paths (".gather_mm") are taken
    relative to this package, which is installed under its own name."""
    module, attr = path.split(":")
    package = __name__.rsplit(".", 2)[0] if module.startswith(".") else None
    return getattr(importlib.import_module(module, package), attr)

