"""The op record: everything the harness knows about one op, on one dataclass
(after PyTorch's OpInfo).

Each op module in `harness/ops/` declares its records in `OPS` and
`harness/ops/__init__.py` lists the modules explicitly. Generic code (catalog,
runner, validator, fuzzer, reproducers, native export) consumes the records
and never names an op itself.

The contract is op-agnostic: an op receives named operands and params.
`reference(inputs, params)` and `reference_vjp(inputs, g, params)` see the
logical operands as float64 (integer operands as int64); `mlx_call(operands,
params)` sees MLX arrays (integer operands as int64 numpy arrays, which the
call converts as MLX wants them). An optional operand absent from a scenario
is absent from `inputs` too.

The MLX call is named as a "module:attr" string, and only imported when a
command runs MLX: it lives in a standalone file (harness/ops/repro/) that a
reproducer embeds as text, so it imports mlx at its top. Everything else on
the record is a plain function reference; none of it imports mlx or
hypothesis at import time, so the validation path needs numpy alone.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field, replace
from typing import Callable

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_PATH = re.compile(r"^\.*[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class OpInfoError(ValueError):
    """An inconsistent op record (a programming error in an op module)."""


@dataclass(frozen=True, kw_only=True, eq=False)   # compared and hashed by identity
class OpInfo:
    # Identity: the name scenarios use in their `op` field, and one line for listings.
    name: str
    summary: str = ""

    # Call signature. Operands in call order; the differentiable ones (a VJP may be
    # taken with respect to any non-empty subset); integer operands, held fixed and
    # never perturbed (index arrays, quantization codes, masks, offsets); optional
    # operands, which a scenario may leave out (MLX then applies its default).
    operands: tuple
    differentiable: tuple
    integer_operands: tuple = ()
    optional_operands: tuple = ()

    # Catalog forms: every base scenario is expanded into one scenario per
    # (name suffix, params) pair here, e.g. gather_mm's sorted and unsorted
    # calls; () means each scenario appears once, as written.
    variants: tuple = ()
    # Defect tags whose defect kills the process (a SIGFPE in MLX's kernel, say): the
    # runner isolates every call anyway; tests that run calls in-process skip these.
    fatal_tags: tuple = ()
    # Params under which MLX promises the same result (gather_mm: sorted_indices
    # off, the flag being a performance hint): the metamorphic oracle compares.
    equivalent_params: dict = field(default_factory=dict)
    # Defect tags that bite only under a param: tag -> the param that must be
    # truthy (gather_mm's sorted-path classes), or "!param": that must be falsy.
    # Any other tag always bites.
    conditional_tags: dict = field(default_factory=dict)
    # Defect tags that only a transform oracle can show (the first-order checks pass
    # on every scenario they tag): tag -> that oracle's name in judging/oracles.py
    # ("second_order", "vmap", "forward_mode", "compile"). A context that does not run
    # the oracle (the native C++ suite, an in-process first-order check) does not
    # expect the defect; any other tag is shown by the first-order checks.
    revealed_by: dict = field(default_factory=dict)

    # The float64 oracle, numpy only: reference(inputs, params) -> Y and
    # reference_vjp(inputs, G, params) -> {operand: gradient}. Without a
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
    # The rule the reference implements, in one line: the comment a reproducer
    # puts above its expected values.
    rule: str = ""

    # The call under test: "module:attr" of mlx_call(operands, params), in a
    # standalone file (mlx, numpy and the standard library only) that reproducers embed.
    mlx_call: str
    # Optional: the same call for given params as one Python expression over the
    # operands' variable names, call_expression(params, names) -> str, so that a
    # reproducer shows the one MLX call instead of the general call file (a test
    # holds both to the same results).
    call_expression: Callable | None = None

    # Catalog: () -> base scenarios (expanded by `variants`).
    scenarios: Callable | None = None
    # Error inputs (PyTorch OpInfo's idea): () -> scenarios of calls MLX's forward
    # refuses (a shape or dtype it does not take); the catalog runs each with
    # must_refuse set, and the VJP must refuse it too (the "refusal" oracle).
    error_inputs: Callable | None = None

    # Fuzzing: strategy(draw, dtypes) -> Scenario, built from harness.core.draw (which
    # imports hypothesis only when drawing); how often the op is drawn relative to others.
    strategy: Callable | None = None
    fuzz_weight: int = 1

    # Coverage: the MLX primitives (C++ class names, e.g. "GatherMM") whose `vjp`
    # this op's calls exercise; the coverage table counts them against MLX's source.
    primitives: tuple = ()
    # Floating dtypes the op accepts (its catalog and strategy use each), and whether
    # it takes complex64 inputs with a VJP (its reference is then complex128).
    dtypes: tuple = ("float32",)
    complex: bool = False

    # Which transforms compose with the op's call (the transform oracles run only
    # where True): its VJP is differentiable again (second order), it maps over a
    # leading batch axis (vmap), it compiles (mx.compile).
    second_order: bool = True
    vmap: bool = True
    compile: bool = True

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
        yield from self._variant_problems()
        if not callable(self.reference):
            yield "field reference: not callable"
        if self.reference_vjp is not None and not callable(self.reference_vjp):
            yield "field reference_vjp: not callable"
        for name in ("scenarios", "strategy", "call_expression", "error_inputs"):
            if getattr(self, name) is not None and not callable(getattr(self, name)):
                yield f"field {name}: not callable"
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
        if not set(self.optional_operands) <= set(ops):
            yield f"field optional_operands: {self.optional_operands} must be operands"
        if diff and diff[0] in self.optional_operands:
            yield "field optional_operands: the first differentiable operand sets the dtype, it cannot be absent"

    def _variant_problems(self):
        for v in self.variants:
            if not (isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str)
                    and _NAME.match(v[0]) and isinstance(v[1], dict)):
                yield f"field variants: {v!r} is not a (suffix, params) pair"
        if not isinstance(self.equivalent_params, dict):
            yield "field equivalent_params: must be a dict of params"
        if not isinstance(self.conditional_tags, dict) or not all(
                isinstance(k, str) and isinstance(p, str) for k, p in self.conditional_tags.items()):
            yield "field conditional_tags: must map tag names to param names"
        if not isinstance(self.revealed_by, dict) or \
                not all(isinstance(k, str) and isinstance(v, str) for k, v in self.revealed_by.items()):
            yield "field revealed_by: must map tag names to oracle names"

    def _transform_problems(self):
        floats = ("float32", "float16", "bfloat16", "float64")
        if not self.dtypes or not set(self.dtypes) <= set(floats):
            yield f"field dtypes: {self.dtypes!r} must be a non-empty subset of {floats}"
        if not all(isinstance(p, str) and p[:1].isupper() for p in self.primitives):
            yield f"field primitives: {self.primitives!r} must be MLX primitive class names"
        for name in ("complex", "second_order", "vmap", "compile"):
            if not isinstance(getattr(self, name), bool):
                yield f"field {name}: must be True or False"

    def _fuzz_problems(self):
        if not self.has_vjp and self.strategy is not None:
            yield "field has_vjp: an op without a VJP has no fuzz strategy"
        if not isinstance(self.fuzz_weight, int) or self.fuzz_weight < 1:
            yield f"field fuzz_weight: {self.fuzz_weight!r} is not a positive integer"
        if self.strategy is not None and not self.rule:
            yield "field rule: a fuzzed op needs the one-line rule its reproducers quote"

    # --- what generic code asks of a record -------------------------------------------------

    def catalog_scenarios(self) -> list:
        """Its scenarios, then its error inputs marked must_refuse."""
        out = list(self.scenarios()) if self.scenarios else []
        errors = list(self.error_inputs()) if self.error_inputs else []
        return out + [replace(s, must_refuse=True) for s in errors]

    def expects_defect(self, tags, params, oracles=None) -> bool:
        """Whether any of `tags` bites on a call with `params`; with `oracles` (names),
        only the tags those oracles can show (`revealed_by`) count."""
        return any(self._bites(self.conditional_tags.get(t), params) for t in tags
                   if oracles is None or t not in self.revealed_by or self.revealed_by[t] in oracles)

    @staticmethod
    def _bites(condition, params) -> bool:
        if condition is None:
            return True
        if condition.startswith("!"):
            return not params.get(condition[1:])
        return bool(params.get(condition))

    def call_problems(self, s) -> list:
        """What is wrong with a scenario as a call of this op (unknown or missing
        operands, wrt outside the differentiable ones)."""
        out = []
        names = set(s.operands)
        if names - set(self.operands):
            out.append(f"unknown operands {sorted(names - set(self.operands))}")
        missing = set(self.operands) - set(self.optional_operands) - names
        if missing:
            out.append(f"missing operands {sorted(missing)}")
        if not s.wrt or not set(s.wrt) <= set(self.differentiable) & names:
            out.append(f"wrt {list(s.wrt)} is not a non-empty subset of {list(self.differentiable)}")
        return out


def resolve(path: str):
    """Import "module:attr". Relative module paths (".ops.repro.pad") are taken
    relative to this package, which is installed under its own name."""
    module, attr = path.split(":")
    package = __name__.rsplit(".", 2)[0] if module.startswith(".") else None
    return getattr(importlib.import_module(module, package), attr)


def source_file(path: str) -> str:
    """The file a "module:attr" path lives in, without importing it (reproducers
    embed it as text; importing it would import mlx)."""
    import importlib.util
    module = path.split(":")[0]
    package = __name__.rsplit(".", 2)[0] if module.startswith(".") else None
    spec = importlib.util.find_spec(module, package)
    if spec is None or spec.origin is None:
        raise OpInfoError(f"cannot find the source of {path!r}")
    return spec.origin
